// Bad input of every kind the operations take, over real HTTP, against a server with a small
// BODY_LIMIT_BYTES: missing and empty fields, bad e-mail addresses, over-long and control
// characters, bad booleans, repeated parameters, wrong Content-Types (415), DOCTYPE and malformed
// bodies (400), bodies over the limit (413), unknown paths (404), used e-mail addresses (409).
// Each answers its documented 4xx with an errorResult, changes nothing, and nothing answers 5xx.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPalPackage } from '../src/domain/pal-manifest.js';
import { deployPalPackage, undeployPal } from '../src/domain/pals.js';
import {
  expectError,
  form,
  startHarness,
  type Answer,
  type Harness,
  type RequestOptions,
} from './harness.js';

const BODY_LIMIT = 2048;
const ROOT = '/services/rest';
const PAL_NS = 'urn:pal-workflow:pal';

let h: Harness;
let sso: string;
let tx: string;

beforeAll(async () => {
  h = await startHarness({ env: { BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
  sso = await h.a.json.enterprise.createSso({
    firstName: 'Bea',
    lastName: 'Input',
    email: 'bea@example.test',
  });
  tx = await h.a.json.transactions.createTransaction({ palId: 'leave-request' });
});
afterAll(() => h?.close());

/** Sends the request and expects the errorResult; returns its messages joined. */
async function refused(
  path: string,
  options: RequestOptions,
  status: number,
  code: string,
): Promise<string> {
  const answer = await h.http(path, options);
  return expectError(
    answer,
    status,
    code,
    options.accept === 'application/json' ? 'json' : 'xml',
  ).join('\n');
}

/**
 * A GET sent by node:http: its header values may be arrays (one header line each), and it may
 * carry a body, which fetch refuses to send on a GET.
 */
function rawGet(
  path: string,
  headers: Record<string, string | string[]>,
  body?: string,
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      `${h.url}${path}`,
      { method: 'GET', headers: { Authorization: h.a.authorization, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: res.headers['content-type'] ?? '',
            headers: new Headers(),
            text,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** What a bad request could have changed: counts that the refused requests must leave alone. */
async function state() {
  const txs = await h.a.json.transactions.searchTransactionsRaw({ includeTest: true });
  return {
    transactions: txs.raw.headers.get('X-Total-Count'),
    ssoStatus: await h.a.json.enterprise.getSsoStatus({ sso }),
    bea: await h.a.json.enterprise.isEmailRegistered({ email: 'bea@example.test' }),
    grant: await h.a.json.console.grantConsolePalAccess({ palId: 'leave-request', ssoId: sso }),
  };
}

describe('missing, empty and malformed fields: 400 naming the field', () => {
  const person = { firstName: 'New', lastName: 'Person', email: 'new.person@example.test' };

  it('a form field the operation does not take: 400 naming it, nothing done (a misspelt C3 gave another grant)', async () => {
    const fresh = await h.a.json.enterprise.createSso({
      firstName: 'Mis',
      lastName: 'Spelt',
      email: 'mis.spelt@example.test',
    });
    const grant = { palId: 'leave-request', ssoId: fresh };
    expect(
      await refused(
        `${ROOT}/console/leave-request/grantConsolePalAccess`,
        { body: form({ ssoId: fresh, useEnterpriseprofile: 'true' }) },
        400,
        'INVALID_ARGUMENT',
      ),
    ).toContain('unknown form field "useEnterpriseprofile"');
    expect(
      await h.a.json.console.deleteConsolePalAccess({ ...grant, useEnterpriseProfile: false }),
    ).toBe(false);
  });

  it("a form field that is none of U1's query parameters: 400 naming it", async () => {
    expect(
      await refused(
        '/user/runWorkflow',
        { body: form({ action: 'leave-request', wrokflow: 'leave-request' }) },
        400,
        'INVALID_ARGUMENT',
      ),
    ).toContain('unknown form field "wrokflow"');
  });

  it('every required form field and query parameter, missing or empty', async () => {
    const before = await state();
    const cases: [string, string, Record<string, string>][] = [
      ['T1', `${ROOT}/transactions`, { palId: 'leave-request' }],
      ['T4', `${ROOT}/transactions/removeAllRoles`, { userSSO: sso }],
      ['T7', `${ROOT}/transactions/${tx}/removeRole`, { userSSO: sso }],
      ['C3', `${ROOT}/console/leave-request/grantConsolePalAccess`, { ssoId: sso }],
      ['C4', `${ROOT}/console/leave-request/deleteConsolePalAccess`, { ssoId: sso }],
      ['E1', `${ROOT}/enterprises/sso`, person],
      ['E2', `${ROOT}/enterprises/sso/delete`, { sso }],
      ['E3', `${ROOT}/enterprises/sso/invite`, { email: 'bea@example.test' }],
      ['E6', `${ROOT}/enterprises/sso/update`, { sso, ...person }],
    ];
    for (const [op, path, fields] of cases) {
      for (const name of Object.keys(fields)) {
        const { [name]: _left, ...rest } = fields;
        const missing = await refused(path, { body: form(rest) }, 400, 'INVALID_ARGUMENT');
        expect(missing, `${op} without ${name}`).toContain(name);
        for (const empty of ['', '   ']) {
          // A blank SSO, pal or transaction id may also be an id that does not exist.
          const answer = await h.http(path, { body: form({ ...fields, [name]: empty }) });
          expect([400, 404], `${op} ${name}="${empty}": ${answer.text}`).toContain(answer.status);
          if (empty === '' || ['firstName', 'lastName', 'email'].includes(name)) {
            expect(
              expectError(answer, 400, 'INVALID_ARGUMENT').join('\n'),
              `${op} ${name}="${empty}"`,
            ).toContain(name);
          } else
            expectError(
              answer,
              answer.status,
              answer.status === 400 ? 'INVALID_ARGUMENT' : 'NOT_FOUND',
            );
        }
      }
      // No form at all.
      expectError(await h.http(path, { method: 'POST' }), 400, 'INVALID_ARGUMENT');
    }
    for (const [path, name] of [
      [`${ROOT}/enterprises/sso/registered`, 'email'],
      [`${ROOT}/enterprises/sso/status`, 'sso'],
    ] as const) {
      expect(await refused(path, {}, 400, 'INVALID_ARGUMENT')).toContain(name);
      expect(await refused(`${path}?${name}=`, {}, 400, 'INVALID_ARGUMENT')).toContain(name);
      expect(await refused(`${path}?${name}=a&${name}=b`, {}, 400, 'INVALID_ARGUMENT')).toContain(
        name,
      );
    }
    expect(await state()).toEqual(before);
  });

  it('bad e-mail addresses on E1, E3, E4, E6', async () => {
    const before = await state();
    const bad = [
      'not-an-email',
      'a@',
      '@example.test',
      'a b@example.test',
      'a@b..test',
      'a@-b.test',
      'a@b.test.',
      `${'x'.repeat(250)}@e.test`,
      'a\u0007@b.test',
      'a@b.test\nBcc: c@d.test',
    ];
    for (const email of bad) {
      for (const [path, fields] of [
        [`${ROOT}/enterprises/sso`, { firstName: 'A', lastName: 'B', email }],
        [`${ROOT}/enterprises/sso/invite`, { email }],
        [`${ROOT}/enterprises/sso/update`, { sso, firstName: 'A', lastName: 'B', email }],
      ] as const) {
        expect(
          await refused(path, { body: form(fields) }, 400, 'INVALID_ARGUMENT'),
          `${path} ${email}`,
        ).toContain('email');
      }
      expect(
        await refused(
          `${ROOT}/enterprises/sso/registered?email=${encodeURIComponent(email)}`,
          {},
          400,
          'INVALID_ARGUMENT',
        ),
      ).toContain('email');
    }
    expect(await state()).toEqual(before);
  });

  it('names that are too long or hold control characters; bad booleans; repeated fields; too-long ids', async () => {
    const before = await state();
    for (const [name, value] of [
      ['firstName', 'x'.repeat(101)],
      ['lastName', 'x'.repeat(101)],
      ['firstName', 'Tab\u0000Null'],
      ['lastName', 'Line\nBreak'],
    ] as const) {
      const fields = {
        firstName: 'A',
        lastName: 'B',
        email: 'long.name@example.test',
        [name]: value,
      };
      expect(
        await refused(`${ROOT}/enterprises/sso`, { body: form(fields) }, 400, 'INVALID_ARGUMENT'),
      ).toContain(name);
      expect(
        await refused(
          `${ROOT}/enterprises/sso/update`,
          { body: form({ ...fields, sso }) },
          400,
          'INVALID_ARGUMENT',
        ),
      ).toContain(name);
    }
    for (const value of ['maybe', 'yes', '2', 'truee']) {
      const fields = { ssoId: sso, useEnterpriseProfile: value };
      expect(
        await refused(
          `${ROOT}/console/leave-request/grantConsolePalAccess`,
          { body: form(fields) },
          400,
          'INVALID_ARGUMENT',
        ),
      ).toContain('useEnterpriseProfile');
      expect(
        await refused(
          `${ROOT}/console/leave-request/deleteConsolePalAccess`,
          { body: form(fields) },
          400,
          'INVALID_ARGUMENT',
        ),
      ).toContain('useEnterpriseProfile');
    }
    const twice = new URLSearchParams([
      ['palId', 'leave-request'],
      ['palId', 'travel-expenses'],
    ]);
    expect(
      await refused(`${ROOT}/transactions`, { body: twice }, 400, 'INVALID_ARGUMENT'),
    ).toContain('palId');
    // U1's query parameters may come as form fields: one in both is given twice.
    expect(
      await refused(
        '/user/runWorkflow?workflow=leave-request',
        { body: form({ workflow: 'nope', action: 'search' }) },
        400,
        'INVALID_ARGUMENT',
      ),
    ).toContain('parameter workflow: given more than once');
    // A search header sent twice (two header lines, which Node joins with ", ").
    const searched = await rawGet(`${ROOT}/transactions`, { name: ['Expense', 'zzz'] });
    expect(searched.status, searched.text).toBe(400);
    expect(searched.text).toContain('header name: given more than once');
    // One header line whose filter holds ", " is one filter.
    expect((await rawGet(`${ROOT}/transactions`, { name: 'Smith, John' })).status).toBe(200);
    // A number sent twice is given twice too, not a number that does not read ("1, 2").
    const paged = await rawGet(`${ROOT}/transactions`, { startRecord: ['1', '2'] });
    expect(paged.status, paged.text).toBe(400);
    expect(paged.text).toContain('header startRecord: given more than once');
    // Past the router's bound (percent-encoded ids), the message names the ids' own.
    expect(await refused(`${ROOT}/pals/${'x'.repeat(700)}`, {}, 400, 'INVALID_ARGUMENT')).toBe(
      'a path parameter is longer than any id (200 characters)',
    );
    // Ids longer than any id can be: 400 naming the parameter, in the path too, however long.
    for (const length of [201, 700, 5000]) {
      const longId = 'x'.repeat(length);
      expect(
        await refused(`${ROOT}/pals/${longId}`, {}, 400, 'INVALID_ARGUMENT'),
        `P2 ${length}`,
      ).toMatch(/\bid\b|palId|path parameter/);
      expect(
        await refused(
          `${ROOT}/transactions/${longId}`,
          { accept: 'application/json' },
          400,
          'INVALID_ARGUMENT',
        ),
        `T10 ${length}`,
      ).toMatch(/\bid\b|path parameter/);
      await refused(
        `${ROOT}/console/${longId}/grantConsolePalAccess`,
        { body: form({ ssoId: sso }) },
        400,
        'INVALID_ARGUMENT',
      );
      await refused(
        `${ROOT}/transactions/${longId}/removeRole`,
        { body: form({ userSSO: sso }) },
        400,
        'INVALID_ARGUMENT',
      );
      // (In a form only while the form stays under the body limit.)
      if (length < BODY_LIMIT - 100)
        expect(
          await refused(
            `${ROOT}/transactions`,
            { body: form({ palId: longId }) },
            400,
            'INVALID_ARGUMENT',
          ),
        ).toContain('palId');
      expect(
        await refused(`${ROOT}/enterprises/sso/status?sso=${longId}`, {}, 400, 'INVALID_ARGUMENT'),
      ).toContain('sso');
    }
    expect(await state()).toEqual(before);
  });

  it('a pal id of the longest kind (128 characters) works in every path that takes one', async () => {
    const id = `p${'1234567'.repeat(18)}x`;
    expect(id).toHaveLength(128);
    await deployPalPackage(
      h.domain,
      h.a.enterpriseId,
      await buildPalPackage(
        { id, name: 'Long Id', modes: { transaction: true, console: true } },
        {},
      ),
    );
    for (const client of [h.a.json, h.a.xml]) {
      expect((await client.pals.getPal({ id })).name).toBe('Long Id');
      const created = await client.transactions.createTransaction({ palId: id });
      expect((await client.transactions.getTransaction({ id: created })).name).toBe('Long Id');
      expect(await client.console.grantConsolePalAccess({ palId: id, ssoId: sso })).toBe(true);
      expect(await client.console.deleteConsolePalAccess({ palId: id, ssoId: sso })).toBe(true);
    }
    expectError(await h.http(`${ROOT}/pals/${id}y`), 404, 'NOT_FOUND');
  });

  it('multipart/form-data is a form too: accepted, and checked the same way', async () => {
    const body = new FormData();
    body.set('firstName', 'Multi');
    body.set('lastName', 'Part');
    body.set('email', 'multi.part@example.test');
    const created = await h.http(`${ROOT}/enterprises/sso`, { body, accept: 'application/json' });
    expect(created.status, created.text).toBe(200);
    expect(
      await h.a.json.enterprise.getSsoStatus({ sso: JSON.parse(created.text) as string }),
    ).toBe('ACTIVE');
    const missing = new FormData();
    missing.set('firstName', 'Multi');
    missing.set('email', 'multi.part2@example.test');
    expect(
      await refused(`${ROOT}/enterprises/sso`, { body: missing }, 400, 'INVALID_ARGUMENT'),
    ).toContain('lastName');
    const boundary = '----pal-test-boundary';
    const malformed = await h.http(`${ROOT}/enterprises/sso`, {
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      body: `--${boundary}\r\nContent-Disposition: form-data; name="firstName"\r\n\r\nno end`,
    });
    expectError(malformed, 400, 'INVALID_ARGUMENT');
  });

  it('400 for a multipart value that is not UTF-8 (latin-1 "ü"), nothing made; UTF-8 "ü" is taken', async () => {
    const boundary = 'pal-test-boundary';
    const form = (firstName: Buffer, email: string) =>
      Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="firstName"\r\n\r\n`),
        firstName,
        Buffer.from(
          `\r\n--${boundary}\r\nContent-Disposition: form-data; name="lastName"\r\n\r\nM\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="email"\r\n\r\n${email}\r\n--${boundary}--\r\n`,
        ),
      ]);
    const headers = { 'Content-Type': `multipart/form-data; boundary=${boundary}` };
    const email = 'juergen.latin@example.test';
    expect(
      await refused(
        `${ROOT}/enterprises/sso`,
        { headers, body: form(Buffer.from('J\xfcrgen', 'latin1'), email) },
        400,
        'INVALID_ARGUMENT',
      ),
    ).toContain('not valid UTF-8');
    expect(await h.a.json.enterprise.isEmailRegistered({ email })).toBe(false);
    const created = await h.http(`${ROOT}/enterprises/sso`, {
      headers,
      body: form(Buffer.from('Jürgen', 'utf8'), email),
      accept: 'application/json',
    });
    expect(created.status, created.text).toBe(200);
    expect(await h.a.json.enterprise.isEmailRegistered({ email })).toBe(true);
  });
});

describe('Content-Type and body rules', () => {
  it('415 for a body that is not a form on a form operation, and for types no operation takes', async () => {
    const before = await state();
    const sends: [string, string][] = [
      ['application/json', JSON.stringify({ palId: 'leave-request' })],
      [
        'application/xml',
        `<pal:nameValue xmlns:pal="${PAL_NS}"><name>palId</name><value>leave-request</value></pal:nameValue>`,
      ],
      ['text/plain', 'palId=leave-request'],
      ['text/csv', 'palId\nleave-request\n'],
      ['application/octet-stream', 'palId=leave-request'],
    ];
    for (const [type, body] of sends) {
      for (const path of [
        `${ROOT}/transactions`,
        `${ROOT}/enterprises/sso`,
        `${ROOT}/console/leave-request/grantConsolePalAccess`,
        `${ROOT}/transactions/removeAllRoles`,
      ]) {
        await refused(
          path,
          { headers: { 'Content-Type': type }, body },
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        );
        await refused(
          path,
          { headers: { 'Content-Type': type }, body, accept: 'application/json' },
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        );
      }
    }
    // A form sent to an operation that takes an XML or JSON body.
    await refused(
      `${ROOT}/console/leave-request/runWorkflow`,
      { body: form({ payload: 'aGk=' }) },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    await refused(
      `${ROOT}/transactions/${tx}/runWorkflow`,
      { headers: { 'Content-Type': 'text/csv' }, body: 'a,b' },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expect(await state()).toEqual(before);
  });

  it('415 for a body with a content coding, compressed or not, and the 415 names what is read', async () => {
    const before = await state();
    const json = '{"postData":[{"name":"note","value":"plain"}]}';
    for (const [coding, body] of [
      ['gzip', gzipSync(json)],
      ['gzip', json],
      ['br', json],
      ['gzip, identity', json],
    ] as const) {
      const messages = await refused(
        `${ROOT}/transactions/${tx}/run`,
        { headers: { 'Content-Type': 'application/json', 'Content-Encoding': coding }, body },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
      expect(messages).toContain(`Content-Encoding "${coding}"`);
    }
    for (const type of ['text/csv', 'application/vnd.api+json'])
      expect(
        await refused(
          `${ROOT}/transactions`,
          { headers: { 'Content-Type': type }, body: 'palId=leave-request' },
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        ),
      ).toContain('application/x-www-form-urlencoded');
    expect(await state()).toEqual(before);
    // A request without a body has nothing coded.
    expect((await h.http(`${ROOT}/pals`, { headers: { 'Content-Encoding': 'gzip' } })).status).toBe(
      200,
    );
    // identity is no coding.
    const plain = await h.http(`${ROOT}/transactions`, {
      headers: { 'Content-Encoding': 'identity' },
      body: form({ palId: 'leave-request' }),
      accept: 'text/plain',
    });
    expect(plain.status, plain.text).toBe(200);
  });

  it('400 for a DOCTYPE, before any operation runs (the workflow operations too, not 501)', async () => {
    const doctype = (root: string, ns = PAL_NS) =>
      `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>` +
      `<p:${root} xmlns:p="${ns}"><postData><name>x</name><value>&b;</value></postData></p:${root}>`;
    for (const [path, root, ns] of [
      [`${ROOT}/console/leave-request/runWorkflow`, 'consoleContent', PAL_NS],
      [`${ROOT}/console/leave-request/run`, 'consoleContent', PAL_NS],
      [`${ROOT}/console/leave-request/executeWorkflow`, 'anything', 'urn:any'],
      [`${ROOT}/transactions/${tx}/runWorkflow`, 'transactionContent', PAL_NS],
      [`${ROOT}/transactions/${tx}/run`, 'transactionContent', PAL_NS],
      ['/user/runWorkflow?action=a&workflow=w', 'ServiceRequest', 'urn:pal-workflow:services'],
    ] as const) {
      for (const type of ['application/xml', 'text/xml']) {
        expect(
          await refused(
            path,
            { headers: { 'Content-Type': type }, body: doctype(root, ns) },
            400,
            'INVALID_ARGUMENT',
          ),
          path,
        ).toMatch(/DOCTYPE/);
      }
    }
    // A DOCTYPE to a form operation is a body it does not take.
    await refused(
      `${ROOT}/transactions`,
      { headers: { 'Content-Type': 'application/xml' }, body: doctype('consoleContent') },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('400 for text after the root element, an empty-element root too, and nothing runs', async () => {
    const before = await h.a.json.transactions.getTransaction({ id: tx });
    for (const [path, root, ns] of [
      [`${ROOT}/console/leave-request/runWorkflow`, 'consoleContent', PAL_NS],
      [`${ROOT}/console/leave-request/executeWorkflow`, 'anything', 'urn:any'],
      [`${ROOT}/transactions/${tx}/runWorkflow`, 'transactionContent', PAL_NS],
      [`${ROOT}/transactions/${tx}/run`, 'transactionContent', PAL_NS],
      ['/user/runWorkflow?action=a&workflow=w', 'ServiceRequest', 'urn:pal-workflow:services'],
    ] as const)
      for (const body of [
        `<p:${root} xmlns:p="${ns}"/>junk`,
        `<p:${root} xmlns:p="${ns}"/>x>`,
        `<p:${root} xmlns:p="${ns}"/><![CDATA[junk]]>`,
      ])
        await refused(
          path,
          { headers: { 'Content-Type': 'application/xml' }, body },
          400,
          'INVALID_ARGUMENT',
        );
    expect(await h.a.json.transactions.getTransaction({ id: tx })).toEqual(before);
  });

  it('400 for members a default xmlns puts in a namespace (the XSDs have them unqualified), nothing run', async () => {
    for (const [path, body] of [
      [
        `${ROOT}/console/leave-request/runWorkflow`,
        `<consoleContent xmlns="${PAL_NS}"><postData><name>q</name><value>v</value></postData></consoleContent>`,
      ],
      [
        '/user/runWorkflow?action=a&workflow=w',
        '<ServiceRequest xmlns="urn:pal-workflow:services"><payload/></ServiceRequest>',
      ],
    ] as const)
      expect(
        await refused(
          path,
          { headers: { 'Content-Type': 'application/xml' }, body },
          400,
          'INVALID_ARGUMENT',
        ),
        path,
      ).toMatch(/members are unqualified/);
  });

  it('bodies and forms are UTF-8: another charset is a 415, other bytes or another declared encoding a 400, nothing changed on the way', async () => {
    const path = `${ROOT}/transactions/${tx}/run`;
    const latin1Xml = (declared: string) =>
      Buffer.concat([
        Buffer.from(
          `<?xml version="1.0" encoding="${declared}"?><pal:transactionContent xmlns:pal="${PAL_NS}"><postData><name>x</name><value>M`,
        ),
        Buffer.from([0xfc]),
        Buffer.from('ller</value></postData></pal:transactionContent>'),
      ]);
    const asciiXml = (declared: string) =>
      `<?xml version="1.0" encoding="${declared}"?><pal:transactionContent xmlns:pal="${PAL_NS}"><postData><name>x</name><value>Mueller</value></postData></pal:transactionContent>`;
    const cases: [Record<string, string>, RequestInit['body'], number, string, string][] = [
      [
        { 'Content-Type': 'application/xml; charset=ISO-8859-1' },
        latin1Xml('ISO-8859-1'),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'charset "ISO-8859-1"',
      ],
      [
        { 'Content-Type': 'application/xml' },
        latin1Xml('ISO-8859-1'),
        400,
        'INVALID_ARGUMENT',
        'not valid UTF-8',
      ],
      [
        { 'Content-Type': 'application/xml' },
        asciiXml('ISO-8859-1'),
        400,
        'INVALID_ARGUMENT',
        'encoding "ISO-8859-1"',
      ],
      [
        { 'Content-Type': 'application/json; charset=latin1' },
        '{"postData":[]}',
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'charset "latin1"',
      ],
      [
        { 'Content-Type': 'application/json' },
        Buffer.concat([
          Buffer.from('{"postData":[{"name":"x","value":"'),
          Buffer.from([0xc3, 0x28]),
          Buffer.from('"}]}'),
        ]),
        400,
        'INVALID_ARGUMENT',
        'not valid UTF-8',
      ],
    ];
    for (const [headers, body, status, code, says] of cases) {
      const messages = await refused(path, { headers, body }, status, code);
      expect(messages).toContain(says);
    }
    // Every charset parameter counts (the first alone was read), and a form's too.
    for (const [target, type, body] of [
      [path, 'application/json; charset=utf-8; charset=latin1', '{"postData":[]}'],
      [`${ROOT}/transactions`, 'application/x-www-form-urlencoded; charset=iso-8859-1', 'palId=x'],
      [`${ROOT}/transactions`, 'multipart/form-data; boundary=b; charset=latin1', '--b--\r\n'],
    ] as const)
      expect(
        await refused(
          target,
          { headers: { 'Content-Type': type }, body },
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        ),
      ).toMatch(/charset "(latin1|iso-8859-1)"/);
    // A form is UTF-8 too: raw bytes that are not, or an escape that does not decode as UTF-8.
    const sso = `${ROOT}/enterprises/sso`;
    const formOf = (firstName: Buffer | string) => ({
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: Buffer.concat([
        Buffer.from('firstName='),
        Buffer.from(firstName),
        Buffer.from('&lastName=b&email=utf8.form@example.test'),
      ]),
    });
    expect(
      await refused(sso, formOf(Buffer.from([0xff, 0xfe])), 400, 'INVALID_ARGUMENT'),
    ).toContain('not valid UTF-8');
    expect(await refused(sso, formOf('%ED%A0%80'), 400, 'INVALID_ARGUMENT')).toContain(
      'not percent-encoded UTF-8',
    );
    // And a query: an escape that does not decode is refused, not read as its literal text (it
    // looked up an SSO of the id "%FFx%C3%BC"), on operations and pages alike.
    for (const query of [
      `${sso}/status?sso=%FFx%C3%BC`,
      `${sso}/registered?email=a%FF@example.com`,
      '/user/runWorkflow?workflow=m%FCller&action=echo',
      `${ROOT}/pals?x=%E2%82`,
    ])
      expect(await refused(query, {}, 400, 'INVALID_ARGUMENT'), query).toContain(
        'is not percent-encoded UTF-8',
      );
    // Well-formed escapes still reach the operation, decoded.
    const unknown = await h.http(`${sso}/status?sso=x%C3%BC`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('xü');
    const before = await h.a.json.transactions.getTransaction({ id: tx });
    // UTF-8, said so or not, in either spelling, reaches the operation (whose workflow then runs
    // and fails on this made-up input: a 422 from the run, not a 400 or 415 from the body).
    for (const [type, declared] of [
      ['application/xml; charset=UTF-8', 'UTF-8'],
      ['application/xml; charset="utf8"', 'utf-8'],
      ['text/xml', 'UTF-8'],
    ]) {
      const answer = await h.http(path, {
        headers: { 'Content-Type': type },
        body: asciiXml(declared),
      });
      expect([answer.status, answer.text]).toEqual([422, expect.stringContaining('WORKFLOW')]);
    }
    expect((await h.a.json.transactions.getTransaction({ id: tx })).id).toBe(before.id);
  });

  it('400 for malformed XML and JSON, unknown members and a wrong root, before any operation runs', async () => {
    const path = `${ROOT}/console/leave-request/runWorkflow`;
    const xml = { 'Content-Type': 'application/xml' };
    const json = { 'Content-Type': 'application/json' };
    await refused(
      path,
      { headers: xml, body: '<pal:consoleContent xmlns:pal="urn:pal-workflow:pal"><postData>' },
      400,
      'INVALID_ARGUMENT',
    );
    await refused(path, { headers: xml, body: 'not xml at all' }, 400, 'INVALID_ARGUMENT');
    expect(
      await refused(
        path,
        {
          headers: xml,
          body: `<pal:consoleContent xmlns:pal="${PAL_NS}"><bogus/></pal:consoleContent>`,
        },
        400,
        'INVALID_ARGUMENT',
      ),
    ).toContain('bogus');
    await refused(
      path,
      { headers: xml, body: `<pal:transactionContent xmlns:pal="${PAL_NS}"/>` },
      400,
      'INVALID_ARGUMENT',
    );
    await refused(path, { headers: json, body: '{"postData": [' }, 400, 'INVALID_ARGUMENT');
    await refused(path, { headers: json, body: '[]' }, 400, 'INVALID_ARGUMENT');
    expect(
      await refused(
        path,
        { headers: json, body: '{"postData": [], "bogus": 1}', accept: 'application/json' },
        400,
        'INVALID_ARGUMENT',
      ),
    ).toContain('bogus');
    await refused(
      path,
      { headers: json, body: '{"postData": [{"name": "\\u0001"}]}' },
      400,
      'INVALID_ARGUMENT',
    );
    // A required body that is missing.
    await refused(path, { method: 'POST' }, 400, 'INVALID_ARGUMENT');
  });

  it('a body on a GET is no part of the request: it answers as without one', async () => {
    const before = await state();
    const body = '{"sso": "x"}';
    const answer = await rawGet(
      `${ROOT}/enterprises/sso/status?sso=${sso}`,
      { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
      body,
    );
    h.validator.assertValid(answer.text);
    expect(answer.text).toBe((await h.http(`${ROOT}/enterprises/sso/status?sso=${sso}`)).text);
    expect(await state()).toEqual(before);
  });
});

describe(`bodies over BODY_LIMIT_BYTES (${BODY_LIMIT})`, () => {
  const big = 'x'.repeat(BODY_LIMIT + 100);

  it('413 for a form, an XML, a JSON and a multipart body over the limit, and for a chunked one', async () => {
    const before = await state();
    await refused(
      `${ROOT}/enterprises/sso`,
      { body: form({ firstName: big, lastName: 'L', email: 'big@example.test' }) },
      413,
      'PAYLOAD_TOO_LARGE',
    );
    await refused(
      `${ROOT}/transactions`,
      { body: form({ palId: big }), accept: 'application/json' },
      413,
      'PAYLOAD_TOO_LARGE',
    );
    const xml = `<pal:consoleContent xmlns:pal="${PAL_NS}"><payload>${Buffer.from(big).toString('base64')}</payload></pal:consoleContent>`;
    await refused(
      `${ROOT}/console/leave-request/runWorkflow`,
      { headers: { 'Content-Type': 'application/xml' }, body: xml },
      413,
      'PAYLOAD_TOO_LARGE',
    );
    await refused(
      `${ROOT}/transactions/${tx}/run`,
      {
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ payload: Buffer.from(big).toString('base64') }),
      },
      413,
      'PAYLOAD_TOO_LARGE',
    );
    const multipart = new FormData();
    multipart.set('firstName', big);
    multipart.set('lastName', 'L');
    multipart.set('email', 'big.multi@example.test');
    await refused(`${ROOT}/enterprises/sso`, { body: multipart }, 413, 'PAYLOAD_TOO_LARGE');
    // Many small parts that add up to more than the limit.
    const parts = new FormData();
    for (let i = 0; i < 40; i++) parts.set(`extra${i}`, 'y'.repeat(60));
    parts.set('firstName', 'Many');
    parts.set('lastName', 'Parts');
    parts.set('email', 'many.parts@example.test');
    await refused(`${ROOT}/enterprises/sso`, { body: parts }, 413, 'PAYLOAD_TOO_LARGE');
    // Without a Content-Length: the limit holds as the body streams in.
    const chunks = [form({ palId: 'leave-request', pad: '' }).toString(), `x`.repeat(BODY_LIMIT)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
        controller.close();
      },
    });
    await refused(
      `${ROOT}/transactions`,
      { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: stream },
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expect(await h.a.json.enterprise.isEmailRegistered({ email: 'big@example.test' })).toBe(false);
    expect(await h.a.json.enterprise.isEmailRegistered({ email: 'big.multi@example.test' })).toBe(
      false,
    );
    expect(await h.a.json.enterprise.isEmailRegistered({ email: 'many.parts@example.test' })).toBe(
      false,
    );
    expect(await state()).toEqual(before);
  });

  it('a body just under the limit reaches the operation; without credentials, the size does not matter: 401', async () => {
    const fine = await h.http(`${ROOT}/enterprises/sso`, {
      body: form({
        firstName: 'F',
        lastName: 'x'.repeat(BODY_LIMIT - 200),
        email: 'fine@example.test',
      }),
    });
    // Under the limit, so the operation itself judges it: too long a name.
    expect(expectError(fine, 400, 'INVALID_ARGUMENT').join('\n')).toContain('lastName');
    const anonymous = await h.http(`${ROOT}/enterprises/sso`, {
      auth: null,
      body: form({ firstName: big, lastName: 'L', email: 'anon@example.test' }),
    });
    expectError(anonymous, 401, 'UNAUTHORIZED');
  });
});

describe('unknown paths and methods', () => {
  it('a path that takes other methods: 405 naming them in Allow, with or without credentials', async () => {
    for (const [method, path, allow] of [
      ['POST', `${ROOT}/pals/bare`, 'GET, HEAD'],
      ['DELETE', `${ROOT}/pals/bare`, 'GET, HEAD'],
      ['PUT', `${ROOT}/transactions`, 'GET, HEAD, POST'],
      ['GET', '/user/runWorkflow', 'POST'],
      ['PATCH', `${ROOT}/transactions/removeAllRoles`, 'GET, HEAD, POST'],
      ['OPTIONS', `${ROOT}/pals`, 'GET, HEAD'],
      ['POST', '/healthz', 'GET, HEAD'],
      // Pages too: every route as registered.
      ['DELETE', '/services/enter/some-token', 'GET, HEAD'],
    ] as const) {
      for (const [auth, accept, format] of [
        [undefined, undefined, 'xml'],
        [null, 'application/json', 'json'],
      ] as const) {
        const answer = await h.http(path, {
          method,
          auth,
          accept,
          body: method === 'GET' || method === 'OPTIONS' ? undefined : '',
        });
        expect(
          expectError(answer, 405, 'METHOD_NOT_ALLOWED', format).join('\n'),
          `${method} ${path}`,
        ).toContain(`it takes ${allow}`);
        expect(answer.headers.get('allow')).toBe(allow);
      }
    }
  });

  it('answer 404 with an errorResult, with or without credentials', async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/services'],
      ['GET', '/services/rest'],
      ['GET', `${ROOT}/nope`],
      ['GET', `${ROOT}/pals/bare/extra`],
      ['PUT', `${ROOT}/nope`],
      // A trailing slash is another path to the router: not one that takes other methods.
      ['POST', '/user/runWorkflow/'],
      ['GET', '/healthz/'],
      ['GET', '/rest/pals'],
      ['GET', '/SERVICES/rest/pals'],
    ] as const) {
      for (const auth of [undefined, null]) {
        const answer = await h.http(path, {
          method,
          auth,
          body: method === 'GET' ? undefined : '',
        });
        expect(expectError(answer, 404, 'NOT_FOUND').join('\n'), `${method} ${path}`).toContain(
          path.split('?')[0],
        );
        expectError(
          await h.http(path, {
            method,
            auth,
            accept: 'application/json',
            body: method === 'GET' ? undefined : '',
          }),
          404,
          'NOT_FOUND',
          'json',
        );
      }
    }
  });

  it('a browser asking for a page that is not there gets a page; operations stay errorResults', async () => {
    const browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    for (const path of ['/services/sessio', '/services/enter', '/services/', '/']) {
      const answer = await h.http(path, { accept: browser, auth: null });
      expect([answer.status, answer.type], path).toEqual([404, 'text/html; charset=utf-8']);
      expect(answer.text).toContain('<h1>No such page</h1>');
    }
    expectError(await h.http(`${ROOT}/nope`, { accept: browser }), 404, 'NOT_FOUND');
    expectError(await h.http('/services/sessio', { accept: 'application/xml' }), 404, 'NOT_FOUND');
    expectError(await h.http('/', { accept: 'application/xml' }), 404, 'NOT_FOUND');
    // A link the router refuses (garbled percent-encoding, a token far too long): a page too.
    for (const path of ['/services/enter/%E0%A4', `/services/enter/${'A'.repeat(10_000)}`]) {
      const answer = await h.http(path, { accept: browser, auth: null });
      expect([answer.status, answer.type], path.slice(0, 40)).toEqual([
        400,
        'text/html; charset=utf-8',
      ]);
      expect(answer.text).toContain('<h1>This address is not valid</h1>');
      expect(answer.headers.get('RateLimit')).toMatch(/^"address";r=\d+;t=\d+$/);
      expectError(
        await h.http(path, { accept: 'application/xml', auth: null }),
        400,
        'INVALID_ARGUMENT',
      );
    }
    // A page's form the parser refuses says why, not that the address is wrong.
    const refusedForm = await h.http('/services/invitations/abc', {
      accept: browser,
      auth: null,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: Buffer.from([0x61, 0x3d, 0xff]),
    });
    expect([refusedForm.status, refusedForm.type]).toEqual([400, 'text/html; charset=utf-8']);
    expect(refusedForm.text).toContain('<h1>This request was refused</h1>');
    expect(refusedForm.text).toContain('not valid UTF-8');
  });

  it('a body sent where no route takes one is not read: 404 or 405, however large, whatever its type', async () => {
    // Broken JSON: a 400 would show it was parsed. Larger than BODY_LIMIT_BYTES: a 413 would show
    // it was read.
    const body = `{"broken": "${'x'.repeat(64 * 1024)}`;
    for (const [path, status, code] of [
      ['/nope', 404, 'NOT_FOUND'],
      [`${ROOT}/nope`, 404, 'NOT_FOUND'],
      ['/healthz', 405, 'METHOD_NOT_ALLOWED'],
      ['/openapi.json', 405, 'METHOD_NOT_ALLOWED'],
    ] as const)
      for (const type of ['application/json', 'text/plain', 'application/octet-stream']) {
        const answer = await h.http(path, {
          method: 'POST',
          auth: null,
          headers: { 'Content-Type': type },
          accept: 'application/json',
          body,
        });
        expectError(answer, status, code, 'json');
      }
  });

  it('odd ids in the path are ids that do not exist; a broken percent-encoding is a 400', async () => {
    for (const id of [
      '%2e%2e',
      'a%2Fb',
      'ünïcode',
      '%20',
      "x'or'1'='1",
      'x%22%3E%3Cscript%3E',
      'a;b',
      '~',
    ]) {
      expectError(await h.http(`${ROOT}/pals/${id}`), 404, 'NOT_FOUND');
      expectError(
        await h.http(`${ROOT}/transactions/${id}`, { accept: 'application/json' }),
        404,
        'NOT_FOUND',
        'json',
      );
    }
    // Control characters are no id.
    expectError(await h.http(`${ROOT}/pals/%00`), 400, 'INVALID_ARGUMENT');
    for (const path of [`${ROOT}/pals/%E0%A4%A`, `${ROOT}/pals/%zz`, `${ROOT}/transactions/%`]) {
      expectError(await h.http(path), 400, 'INVALID_ARGUMENT');
      expectError(
        await h.http(path, { accept: 'application/json' }),
        400,
        'INVALID_ARGUMENT',
        'json',
      );
    }
  });
});

describe("what Node's HTTP parser refuses before any route: an errorResult too", () => {
  /** Bytes as a client would send them, on a socket of their own; the whole answer, once closed. */
  const exchange = (head: Buffer): Promise<{ status: number; type: string; body: string }> =>
    new Promise((resolve, reject) => {
      const { port, hostname } = new URL(h.url);
      const socket = connect(Number(port), hostname, () => socket.end(head));
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const [headers = '', body = ''] = text.split('\r\n\r\n');
        resolve({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]),
          type: /content-type: ([^\r]+)/i.exec(headers)?.[1] ?? '',
          body,
        });
      });
    });
  const request = (...headerLines: (string | Buffer)[]) =>
    exchange(
      Buffer.concat([
        Buffer.from(`GET ${ROOT}/pals HTTP/1.1\r\nHost: pal.test\r\n`),
        ...headerLines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\r\n')])),
        Buffer.from('\r\n'),
      ]),
    );

  it.each([
    ['a control character in a header value', ['name: a\u0001b']],
    ['a header name beyond ASCII (its UTF-8 bytes)', [Buffer.from('nämé: x', 'utf8')]],
    ['headers over 16 KiB', [`Authorization: Basic ${'A'.repeat(20_000)}`]],
    ['a space in a header name', ['bad name: x']],
  ] as const)('%s: 400 with an errorResult in XML', async (_, lines) => {
    const answer = await request(...lines);
    expect(answer.status).toBe(400);
    expect(answer.type).toBe('application/xml; charset=utf-8');
    h.validator.assertValid(answer.body);
    expectError({ ...answer, text: answer.body }, 400, 'INVALID_ARGUMENT');
  });

  it('answers in the format the Accept line asks for when it arrived before what broke the request', async () => {
    const json = (answer: { body: string }) =>
      JSON.parse(answer.body) as {
        success: boolean;
        messages: { message: string; type: string }[];
      };
    const overflow = await request('Accept: application/json', `X-Pad: ${'a'.repeat(20_000)}`);
    expect([overflow.status, overflow.type]).toEqual([400, 'application/json; charset=utf-8']);
    expect(json(overflow)).toEqual({
      success: false,
      messages: [{ type: 'INVALID_ARGUMENT', message: expect.stringContaining('16 KiB') }],
    });
    // A byte no URL may hold: the message says it is the path or query, not a header.
    const url = await exchange(
      Buffer.concat([
        Buffer.from(`GET ${ROOT}/enterprises/sso/registered?email=a`),
        Buffer.from([0xff]),
        Buffer.from('@b.c HTTP/1.1\r\nHost: pal.test\r\nAccept: application/json\r\n\r\n'),
      ]),
    );
    expect([url.status, url.type]).toEqual([400, 'application/json; charset=utf-8']);
    expect(json(url).messages[0]!.message).toContain("the request's path or query");
    const textXml = await request('Accept: text/xml', 'name: a\u0001b');
    expect([textXml.status, textXml.type]).toEqual([400, 'text/xml; charset=utf-8']);
    h.validator.assertValid(textXml.body);
    // Two Accept lines count as one list, as for a request that is read: XML is refused here.
    const twoLines = await request(
      'Accept: application/xml;q=0',
      'Accept: application/json',
      'name: a\u0001b',
    );
    expect([twoLines.status, twoLines.type]).toEqual([400, 'application/json; charset=utf-8']);
  });

  it('a method or HTTP version the service does not speak, and broken body framing: what each is', async () => {
    const raw = async (text: string) => {
      const answer = await exchange(Buffer.from(text));
      return {
        ...answer,
        said: expectError(
          { ...answer, text: answer.body },
          answer.status,
          answer.status === 501
            ? 'NOT_IMPLEMENTED'
            : answer.status === 505
              ? 'HTTP_VERSION_NOT_SUPPORTED'
              : 'INVALID_ARGUMENT',
        ).join(' '),
      };
    };
    const post = (framing: string, body: string) =>
      raw(
        `POST ${ROOT}/transactions HTTP/1.1\r\nHost: pal.test\r\nAuthorization: ${h.a.authorization}\r\nContent-Type: application/x-www-form-urlencoded\r\n${framing}\r\n${body}`,
      );
    const method = await raw(`FOO ${ROOT}/pals HTTP/1.1\r\nHost: pal.test\r\n\r\n`);
    expect([method.status, method.said]).toEqual([
      501,
      expect.stringContaining('GET, HEAD and POST'),
    ]);
    const version = await raw(`GET ${ROOT}/pals HTTP/1.2\r\nHost: pal.test\r\n\r\n`);
    expect([version.status, version.said]).toEqual([505, expect.stringContaining('HTTP/1.1')]);
    for (const [framing, body, says] of [
      ['Content-Length: 3\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n', 'framed twice'],
      [
        'Content-Length: 3\r\nContent-Length: 4\r\n',
        'palI',
        'Content-Length is given more than once',
      ],
      ['Transfer-Encoding: chunked\r\n', 'zz\r\npalId=x\r\n0\r\n\r\n', 'its size in hexadecimal'],
    ] as const) {
      const answer = await post(framing, body);
      expect([answer.status, answer.said], framing).toEqual([400, expect.stringContaining(says)]);
    }
  });

  /**
   * Bytes written on a socket that stays open, as a proxy client's or a websocket client's does:
   * the whole answer, and whether the server closed the connection itself (within 5 s).
   */
  const openExchange = (
    head: string,
  ): Promise<{ status: number; headers: string; type: string; body: string; closed: boolean }> =>
    new Promise((resolve, reject) => {
      const { port, hostname } = new URL(h.url);
      const socket = connect(Number(port), hostname, () => socket.write(head));
      const chunks: Buffer[] = [];
      const waited = setTimeout(() => socket.destroy(), 5000);
      let closed = false;
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => (closed = true));
      socket.on('error', reject);
      socket.on('close', () => {
        clearTimeout(waited);
        const text = Buffer.concat(chunks).toString('utf8');
        const [headers = '', body = ''] = text.split('\r\n\r\n');
        resolve({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]),
          headers,
          type: /content-type: ([^\r]+)/i.exec(headers)?.[1] ?? '',
          body,
          closed,
        });
      });
    });

  // Node destroys the socket of a CONNECT when nobody listens for it: the client read nothing.
  it('CONNECT: 405 with Allow for a path the service has, else 501 (no proxy); an errorResult, then closed', async () => {
    for (const [target, status, code, says, allow] of [
      [`${ROOT}/pals`, 405, 'METHOD_NOT_ALLOWED', 'it takes GET, HEAD', 'GET, HEAD'],
      ['/user/runWorkflow', 405, 'METHOD_NOT_ALLOWED', 'it takes POST', 'POST'],
      ['pal.test:443', 501, 'NOT_IMPLEMENTED', 'no proxy', undefined],
      [`${ROOT}/nope`, 501, 'NOT_IMPLEMENTED', 'no proxy', undefined],
    ] as const) {
      for (const [accept, format] of [
        ['', 'xml'],
        ['Accept: application/json\r\n', 'json'],
      ] as const) {
        const answer = await openExchange(
          `CONNECT ${target} HTTP/1.1\r\nHost: pal.test\r\n${accept}\r\n`,
        );
        expect(answer.closed, target).toBe(true);
        const said = expectError({ ...answer, text: answer.body }, status, code, format);
        expect(said.join(' '), target).toContain(says);
        expect(/^allow: (.*)$/im.exec(answer.headers)?.[1], target).toBe(allow);
        expect(answer.headers).toMatch(/^connection: close$/im);
      }
    }
    // A client that ends its side at once is answered too.
    const ended = await exchange(
      Buffer.from('CONNECT pal.test:443 HTTP/1.1\r\nHost: pal.test\r\n\r\n'),
    );
    expectError({ ...ended, text: ended.body }, 501, 'NOT_IMPLEMENTED');
  });

  // Nobody listens for 'upgrade': Node serves such a request as any other (RFC 9110 §7.8 lets a
  // server ignore Upgrade), on a connection that stays as usable as any.
  it('Upgrade: websocket is answered as the same request without it, never dropped', async () => {
    const answer = (authorization?: string) =>
      new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        const req = httpRequest(`${h.url}${ROOT}/pals`, {
          headers: {
            Connection: 'Upgrade',
            Upgrade: 'websocket',
            'Sec-WebSocket-Version': '13',
            'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
            ...(authorization ? { Authorization: authorization } : {}),
          },
        });
        req.on('upgrade', () => reject(new Error('switched protocols')));
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              type: res.headers['content-type'] ?? '',
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
        });
        req.on('error', reject);
        req.end();
      });
    const anonymous = await answer();
    expectError({ ...anonymous, text: anonymous.body }, 401, 'UNAUTHORIZED');
    const allowed = await answer(h.a.authorization);
    expect([allowed.status, allowed.type]).toEqual([200, 'application/xml; charset=utf-8']);
    h.validator.assertValid(allowed.body);
  });

  it('an HTTP/1.1 request without Host: 400 with an errorResult, nothing served', async () => {
    const answer = await exchange(
      Buffer.from(
        `GET ${ROOT}/pals HTTP/1.1\r\nAuthorization: ${h.a.authorization}\r\nConnection: close\r\n\r\n`,
      ),
    );
    expect([answer.status, answer.type]).toEqual([400, 'application/xml; charset=utf-8']);
    h.validator.assertValid(answer.body);
    expect(
      expectError({ ...answer, text: answer.body }, 400, 'INVALID_ARGUMENT').join(' '),
    ).toContain('needs a Host header');
  });

  it('two Host lines, or a Host that is no host[:port]: 400, nothing served', async () => {
    const withHost = (lines: string) =>
      exchange(
        Buffer.from(
          `GET ${ROOT}/pals HTTP/1.1\r\n${lines}Authorization: ${h.a.authorization}\r\nConnection: close\r\n\r\n`,
        ),
      );
    for (const lines of [
      'Host: a.test\r\nHost: b.test\r\n',
      'Host: a b\r\n',
      'Host: @@@/x?\r\n',
      'Host: user@a.test\r\n',
    ]) {
      const answer = await withHost(lines);
      expect(
        expectError({ ...answer, text: answer.body }, 400, 'INVALID_ARGUMENT').join(' '),
        lines,
      ).toContain('the Host header must be one line of host[:port]');
    }
    // A client that waits for the answer before it closes (exchange ends its side at once).
    const statusWithHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${h.url}${ROOT}/pals`, {
          headers: { Host: host, Authorization: h.a.authorization },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    for (const host of ['a.test:8080', '[::1]:80', '10.0.0.1', 'xn--bcher-kva.test'])
      expect(await statusWithHost(host), host).toBe(200);
  });

  // curl sends Expect: 100-continue with a large body, and waits for the 100 before it sends.
  it('Expect: 100-continue: the 100 comes only once credentials and length are judged', async () => {
    /** What arrives before the client sends any body: the first status line it reads. */
    const firstAnswer = (lines: string, target = `${ROOT}/transactions`) =>
      new Promise<string>((resolve, reject) => {
        const { port, hostname } = new URL(h.url);
        const socket = connect(Number(port), hostname, () =>
          socket.write(
            `POST ${target} HTTP/1.1\r\nHost: pal.test\r\nContent-Type: application/x-www-form-urlencoded\r\nExpect: 100-continue\r\n${lines}\r\n`,
          ),
        );
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
          if (text.includes('\r\n\r\n')) {
            resolve(text.slice(0, text.indexOf('\r\n')));
            socket.destroy();
          }
        });
        socket.on('error', reject);
      });
    const auth = `Authorization: ${h.a.authorization}\r\n`;
    expect(await firstAnswer(`Content-Length: ${BODY_LIMIT + 1}\r\n${auth}`)).toBe(
      'HTTP/1.1 413 Payload Too Large',
    );
    expect(await firstAnswer('Content-Length: 20\r\nAuthorization: Basic eDp5\r\n')).toBe(
      'HTTP/1.1 401 Unauthorized',
    );
    expect(await firstAnswer(`Content-Length: 20\r\n${auth}`)).toBe('HTTP/1.1 100 Continue');
    expect(await firstAnswer(`Content-Length: 20\r\n${auth}`, `${ROOT}/nope`)).toBe(
      'HTTP/1.1 404 Not Found',
    );
    expect(await firstAnswer(`Content-Length: 20\r\nContent-Encoding: gzip\r\n${auth}`)).toBe(
      'HTTP/1.1 415 Unsupported Media Type',
    );
  });

  it('an Expect other than 100-continue: 417 with an errorResult', async () => {
    const answer = await request('Expect: 999-zz');
    expect([answer.status, answer.type]).toEqual([417, 'application/xml; charset=utf-8']);
    h.validator.assertValid(answer.body);
    expectError({ ...answer, text: answer.body }, 417, 'EXPECTATION_FAILED');
  });
});

describe('409 for an e-mail address in use', () => {
  it('E1 and E6 refuse an address another account has, in any case; E3 refuses an already active person', async () => {
    const other = await h.a.json.enterprise.createSso({
      firstName: 'Oz',
      lastName: 'Other',
      email: 'oz@example.test',
    });
    for (const email of ['bea@example.test', 'BEA@Example.Test']) {
      expect(
        await refused(
          `${ROOT}/enterprises/sso`,
          { body: form({ firstName: 'B', lastName: 'C', email }) },
          409,
          'CONFLICT',
        ),
      ).toContain('email');
      expect(
        await refused(
          `${ROOT}/enterprises/sso`,
          { body: form({ firstName: 'B', lastName: 'C', email }), auth: h.b },
          409,
          'CONFLICT',
        ),
      ).toContain('email');
      expect(
        await refused(
          `${ROOT}/enterprises/sso/update`,
          { body: form({ sso: other, firstName: 'Oz', lastName: 'O', email }) },
          409,
          'CONFLICT',
        ),
      ).toContain('email');
    }
    await refused(
      `${ROOT}/enterprises/sso/invite`,
      { body: form({ email: 'bea@example.test' }) },
      409,
      'CONFLICT',
    );
    // Nothing moved.
    expect(await h.a.json.enterprise.isEmailRegistered({ email: 'oz@example.test' })).toBe(true);
    expect(await h.a.json.enterprise.getSsoStatus({ sso: other })).toBe('ACTIVE');
    expect(await h.a.json.enterprise.getSsoStatus({ sso })).toBe('ACTIVE');
  });
});

describe('races and states', () => {
  it('ten concurrent E1 with one address: exactly one SSO, the others 409', async () => {
    const email = 'race@example.test';
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.http(`${ROOT}/enterprises/sso`, {
          auth: i % 2 ? h.b : h.a,
          body: form({
            firstName: `R${i}`,
            lastName: 'Ace',
            email: i % 3 ? email : email.toUpperCase(),
          }),
        }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expectError(a, 409, 'CONFLICT');
  });

  it('two SSOs moved to one new address at once (E6): one true, one 409', async () => {
    const one = await h.a.json.enterprise.createSso({
      firstName: 'One',
      lastName: 'X',
      email: 'one@example.test',
    });
    const two = await h.a.json.enterprise.createSso({
      firstName: 'Two',
      lastName: 'X',
      email: 'two@example.test',
    });
    const target = 'both@example.test';
    const answers = await Promise.all(
      [one, two].map((s) =>
        h.http(`${ROOT}/enterprises/sso/update`, {
          body: form({ sso: s, firstName: 'N', lastName: 'X', email: target }),
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expectError(
      answers.find((a) => a.status === 409)!,
      409,
      'CONFLICT',
    );
    const registered = await Promise.all(
      ['one@example.test', 'two@example.test'].map((email) =>
        h.a.json.enterprise.isEmailRegistered({ email }),
      ),
    );
    expect(registered.sort()).toEqual([false, true]);
  });

  it('T1 from a pal that is no longer deployed: 409; P2 shows deployed=false', async () => {
    await undeployPal(h.domain, h.a.enterpriseId, 'expense-approval');
    expect((await h.a.json.pals.getPal({ id: 'expense-approval' })).deployed).toBe(false);
    expectError(
      await h.http(`${ROOT}/transactions`, { body: form({ palId: 'expense-approval' }) }),
      409,
      'CONFLICT',
    );
    expect(await h.a.json.transactions.searchTransactions({ palId: 'expense-approval' })).toEqual(
      [],
    );
  });
});

describe('what a fuzzer found (every one a 4xx or a 200, never a 5xx)', () => {
  const BODY_OPERATIONS = [
    [`${ROOT}/console/leave-request/runWorkflow`, 'consoleContent', PAL_NS],
    [`${ROOT}/console/leave-request/run`, 'consoleContent', PAL_NS],
    [`${ROOT}/transactions/TX/runWorkflow`, 'transactionContent', PAL_NS],
    [`${ROOT}/transactions/TX/run`, 'transactionContent', PAL_NS],
    [
      '/user/runWorkflow?action=a&workflow=leave-request',
      'ServiceRequest',
      'urn:pal-workflow:services',
    ],
  ] as const;
  const at = (path: string) => path.replace('TX', tx);

  it('XML nested deeper than the parser allows: 400 at every depth, on every body operation', async () => {
    for (const [path, root, ns] of BODY_OPERATIONS)
      for (const depth of [99, 100, 101, 102, 250]) {
        // (Short names: the body stays under this server's BODY_LIMIT_BYTES.)
        const body = `<p:${root} xmlns:p="${ns}">${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</p:${root}>`;
        const answer = await h.http(at(path), {
          headers: { 'Content-Type': 'application/xml' },
          body,
        });
        expect(answer.status, `${path} depth ${depth}`).toBe(400);
      }
  });

  it('elements named __proto__, constructor, prototype: unknown members (400) in typed bodies', async () => {
    for (const [path, root, ns] of BODY_OPERATIONS)
      for (const name of ['__proto__', 'constructor', 'prototype']) {
        const body = `<p:${root} xmlns:p="${ns}"><${name}><x>1</x></${name}></p:${root}>`;
        const messages = await refused(
          at(path),
          { headers: { 'Content-Type': 'application/xml' }, body },
          400,
          'INVALID_ARGUMENT',
        );
        expect(messages, `${path} <${name}>`).toContain(name);
      }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('the same names in C5 (a document of the caller) are data: the document reaches the workflow', async () => {
    // leave-request has no console module: the run is reached, and fails as NO_WORKFLOW.
    const answer = await h.http(`${ROOT}/console/leave-request/executeWorkflow`, {
      accept: 'application/json',
      headers: { 'Content-Type': 'application/xml' },
      body: '<order><__proto__><polluted>yes</polluted></__proto__><constructor/><prototype/></order>',
    });
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({
      success: false,
      messages: [{ type: 'NO_WORKFLOW' }],
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('C5 takes a well-formed XML document only: one root, known entities, declared prefixes', async () => {
    for (const [body, message] of [
      ['<a/><b/>', 'exactly one root element'],
      ['<a>&#0;</a>', 'invalid character reference'],
      ['<a>&undefined;</a>', 'unknown entity'],
      ['<x:a/>', 'is not declared'],
    ])
      expect(
        await refused(
          `${ROOT}/console/leave-request/executeWorkflow`,
          { accept: 'application/json', headers: { 'Content-Type': 'application/xml' }, body },
          400,
          'INVALID_ARGUMENT',
        ),
      ).toContain(message);
  });

  it('Accept with parameters (charset=utf-8) is the type the server sends: no 406', async () => {
    for (const [accept, type] of [
      ['application/json; charset=utf-8', 'application/json; charset=utf-8'],
      ['application/xml; charset=utf-8', 'application/xml; charset=utf-8'],
      ['application/json;charset=UTF-8;q=0.9, text/html', 'application/json; charset=utf-8'],
      // XML for a client that asks for text/xml is labelled so, never as a type it refused.
      ['text/xml', 'text/xml; charset=utf-8'],
      ['application/xml;q=0, text/xml', 'text/xml; charset=utf-8'],
    ]) {
      const answer = await h.http(`${ROOT}/pals/leave-request`, { accept });
      expect([answer.status, answer.type], accept).toEqual([200, type]);
    }
    const missing = await h.http(`${ROOT}/pals/no-such-pal`, {
      accept: 'application/xml;q=0, text/xml',
    });
    expect([missing.status, missing.type]).toEqual([404, 'text/xml; charset=utf-8']);
    expect(missing.text).toContain('<type>NOT_FOUND</type>');
    const text = await h.http(`${ROOT}/enterprises/sso/status?sso=${sso}`, {
      accept: 'text/plain; charset=utf-8',
    });
    expect([text.status, text.type]).toEqual([200, 'text/plain; charset=utf-8']);
  });

  it('a character XML cannot carry, in a path, a query, a form field: 400, with an XML answer a parser reads', async () => {
    // h.http checks every XML answer against the XSDs with a real validator.
    const form = (body: string) => ({
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    for (const [path, options] of [
      [`${ROOT}/pals/a%EF%BF%BEb`, {}],
      [`${ROOT}/transactions/a%EF%BF%BFb`, {}],
      [`${ROOT}/enterprises/sso/status?sso=a%EF%BF%BEb`, {}],
      [`${ROOT}/transactions/${tx}/token`, form('userSSO=a%EF%BF%BEb')],
      ['/user/runWorkflow', form('workflow=leave-request&action=a%01b')],
      ['/user/runWorkflow?workflow=leave-request&action=a%00b', { method: 'POST' }],
    ] as const) {
      for (const accept of ['application/xml', 'application/json']) {
        const answer = await h.http(path, { ...options, accept });
        expectError(answer, 400, 'INVALID_ARGUMENT', accept === 'application/xml' ? 'xml' : 'json');
        expect(answer.text, path).toContain('a character that XML cannot carry');
      }
    }
  });

  /** U1's ServiceRequest as JSON text, its payload's data map written as `members`. */
  const userRequestWith = (members: string) =>
    JSON.stringify({
      sizeLimit: 0,
      listLimit: 0,
      paging: false,
      pageSize: 0,
      page: 0,
      debug: false,
      payload: { data: { keep: '1' }, dataMaps: {}, dataLists: {} },
    }).replace('"keep":"1"', members);

  it('the map key __proto__ in a JSON body: 400, as in XML, never silently dropped', async () => {
    const body = userRequestWith('"__proto__":"1","constructor":"2"');
    const answer = await h.http('/user/runWorkflow?workflow=leave-request&action=a', {
      method: 'POST',
      body,
      accept: 'application/json',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(answer, 400, 'INVALID_ARGUMENT', 'json');
    expect(answer.text).toContain('the map key \\"__proto__\\" is reserved');
  });

  // XML refuses `<key>a&#1;</key>`; JSON took `"a\u0001"` as a map key, and the workflow ran.
  it('a map key with a character XML cannot carry in a JSON body: 400, as in XML', async () => {
    for (const [type, body] of [
      ['application/json', userRequestWith('"a\\u0001":"1"')],
      [
        'application/xml',
        '<p:ServiceRequest xmlns:p="urn:pal-workflow:services"><payload><data><entry><key>a&#1;</key><value>1</value></entry></data><dataMaps/><dataLists/></payload><sizeLimit>0</sizeLimit><listLimit>0</listLimit><paging>false</paging><pageSize>0</pageSize><page>0</page><debug>false</debug></p:ServiceRequest>',
      ],
    ] as const) {
      const answer = await h.http('/user/runWorkflow?workflow=leave-request&action=a', {
        method: 'POST',
        body,
        accept: 'application/json',
        headers: { 'Content-Type': type },
      });
      expectError(answer, 400, 'INVALID_ARGUMENT', 'json');
      if (type === 'application/json')
        expect(answer.text).toContain(
          'ServiceRequest.payload.data.a\\u0001: the key contains a character that XML cannot carry',
        );
    }
  });

  // JSON.parse keeps the last; XML refuses a second element or map key. Both formats carry the
  // same values, so a repeated member is a 400 too, and nothing runs.
  it('a member given twice in a JSON object: 400 naming it, as in XML, on typed bodies and C5', async () => {
    for (const [path, body, named] of [
      [
        '/user/runWorkflow?workflow=leave-request&action=a',
        userRequestWith('"q":"x","q":"platform"'),
        'ServiceRequest.payload.data: member \\"q\\" given more than once',
      ],
      [
        `${ROOT}/console/leave-request/runWorkflow`,
        '{"postData":[{"name":"step","value":"a","value":"b"}]}',
        'consoleContent.postData[0]: member \\"value\\" given more than once',
      ],
      [
        `${ROOT}/console/leave-request/executeWorkflow`,
        '{"order":{"id":1,"id":2}}',
        'order: member \\"id\\" given more than once',
      ],
    ] as const) {
      const answer = await h.http(path, {
        method: 'POST',
        body,
        accept: 'application/json',
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(answer, 400, 'INVALID_ARGUMENT', 'json');
      expect(answer.text, path).toContain(named);
    }
  });

  // XML refuses `&#0;` in C5's document; JSON took `\u0000` and the workflow read it as text,
  // which could then make its answer fail, or reach XML as U+FFFD.
  it('C5: a character XML cannot carry in a JSON document is a 400 naming the member, as in XML', async () => {
    const c5 = `${ROOT}/console/leave-request/executeWorkflow`;
    for (const accept of ['application/xml', 'application/json']) {
      const format = accept === 'application/xml' ? 'xml' : 'json';
      const json = await h.http(c5, {
        method: 'POST',
        body: '{"order":{"note":"a\\u0000b","lines":["ok","\\u001b[31m"],"x\\u0001":"y"}}',
        accept,
        headers: { 'Content-Type': 'application/json' },
      });
      expect(expectError(json, 400, 'INVALID_ARGUMENT', format)).toEqual([
        'order.note: contains a character that XML cannot carry',
        'order: a member name contains a character that XML cannot carry',
        'order.lines[1]: contains a character that XML cannot carry',
      ]);
      const xml = await h.http(c5, {
        method: 'POST',
        body: '<order><note>a&#0;b</note></order>',
        accept,
        headers: { 'Content-Type': 'application/xml' },
      });
      expectError(xml, 400, 'INVALID_ARGUMENT', format);
    }
  });

  it('P2 without an id names its parameter, id', async () => {
    const messages = await refused(`${ROOT}/pals/`, {}, 400, 'INVALID_ARGUMENT');
    expect(messages).toMatch(/^id: /);
  });

  it('random bodies, names and Accept headers on every body operation: no 5xx (a property)', async () => {
    const names = fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'postData',
      'name',
      'value',
      'payload',
      'x',
    );
    const element: fc.Arbitrary<string> = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.string({ maxLength: 8 }).map((t) => t.replace(/[<&]/g, '')),
        fc
          .tuple(names, fc.array(tie('node'), { maxLength: 3 }))
          .map(([n, kids]) => `<${n}>${kids.join('')}</${n}>`),
      ),
    })).node as fc.Arbitrary<string>;
    const deep = fc
      .tuple(names, fc.integer({ min: 1, max: 300 }))
      .map(([n, d]) => `${`<${n}>`.repeat(d)}${`</${n}>`.repeat(d)}`);
    const accept = fc.constantFrom(
      undefined,
      '*/*',
      'application/json; charset=utf-8',
      'application/xml;q=0.5',
      'text/plain',
      'text/html',
      'application/json;q=0',
    );
    const operation = fc.constantFrom(...BODY_OPERATIONS, [
      `${ROOT}/console/leave-request/executeWorkflow`,
      'order',
      'urn:any',
    ] as const);
    const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
    await fc.assert(
      fc.asyncProperty(
        operation,
        fc.oneof(element, deep),
        json,
        fc.boolean(),
        accept,
        async ([path, root, ns], inner, jsonBody, asXml, acceptHeader) => {
          const body = asXml ? `<p:${root} xmlns:p="${ns}">${inner}</p:${root}>` : jsonBody;
          const answer = await h.http(at(path), {
            headers: { 'Content-Type': asXml ? 'application/xml' : 'application/json' },
            body,
            ...(acceptHeader === undefined ? {} : { accept: acceptHeader }),
          });
          expect(answer.status, `${path} ${body.slice(0, 200)}`).toBeLessThan(500);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('over the whole suite', () => {
  it('every status answered is one the bundled OpenAPI declares for its operation', () => {
    expect(h.undeclaredStatuses()).toEqual([]);
  });

  it('no answer was a 5xx, and every XML answer was valid', () => {
    expect(h.exchanges.length).toBeGreaterThan(300);
    expect(
      h.exchanges
        .filter((e) => e.status >= 500)
        .map((e) => `${e.method} ${e.path} ${e.status} ${e.body}`),
    ).toEqual([]);
    expect(h.xmlValidated()).toBe(
      h.exchanges.filter((e) => /^(application|text)\/xml/.test(e.type)).length,
    );
  });
});
