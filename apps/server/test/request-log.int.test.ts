// What the request logs say (issue 16, secrets in logs): the URLs of entry links, invitation links
// and mailed links carry tokens that act as passwords while they live, so the logged URL has them
// redacted; a client's X-Request-Id is logged (and echoed) only when it is safe as it is.
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createEnterprise } from '../src/domain/enterprises.js';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { issueTransactionToken } from '../src/domain/tokens.js';
import { createTransaction } from '../src/domain/transactions.js';
import { REDACTED } from '../src/http/request-log.js';
import { testContext, type TestContext } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestContext;
let app: FastifyInstance;
let url: string;
const lines: string[] = [];

beforeAll(async () => {
  t = await testContext({ LOG_LEVEL: 'info' });
  app = await buildApp(t.ctx, { logStream: { write: (line: string) => void lines.push(line) } });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

interface LogRecord {
  reqId?: string;
  msg?: string;
  req?: { method: string; url: string; remoteAddress: string };
  res?: { statusCode: number };
}

/** The log records of the requests whose id is `id`. */
const recordsOf = (id: string) =>
  lines.map((line) => JSON.parse(line) as LogRecord).filter((r) => r.reqId === id);

async function get(path: string, init: RequestInit = {}) {
  const response = await fetch(url + path, { redirect: 'manual', ...init });
  await response.text();
  return response;
}

describe('the logged URL', () => {
  const token = 'Tok3n-Secret_' + 'x'.repeat(30);
  const sealed = 'S3aledTokenValue_' + 'y'.repeat(40);
  const action = 'S3aledAction_' + 'z'.repeat(40);

  it.each([
    ['an entry link', 'GET', `/services/enter/${token}`, `/services/enter/${REDACTED}`],
    [
      'an invitation link',
      'GET',
      `/services/invitations/${token}`,
      `/services/invitations/${REDACTED}`,
    ],
    [
      'an invitation post',
      'POST',
      `/services/invitations/${token}`,
      `/services/invitations/${REDACTED}`,
    ],
    [
      "a mailed link's confirm page",
      'GET',
      `/services/mail?encryptedToken=${sealed}&encryptedAction=${action}`,
      `/services/mail?encryptedToken=${REDACTED}&encryptedAction=${REDACTED}`,
    ],
    [
      "a mailed link's post, the pair in another order and encoded",
      'POST',
      `/services/mail?encrypted%41ction=${action}&x=1&encryptedToken=${sealed}`,
      `/services/mail?encrypted%41ction=${REDACTED}&x=1&encryptedToken=${REDACTED}`,
    ],
    [
      'T3 (getTransactionFromEmail)',
      'GET',
      `/services/rest/transactions/getTransactionFromEmail?encryptedToken=${sealed}&encryptedAction=${action}`,
      `/services/rest/transactions/getTransactionFromEmail?encryptedToken=${REDACTED}&encryptedAction=${REDACTED}`,
    ],
  ] as const)('%s: its secret is redacted', async (_name, method, path, logged) => {
    const id = `log-${Math.random().toString(36).slice(2)}`;
    const response = await get(path, { method, headers: { 'X-Request-Id': id } });
    expect(response.headers.get('X-Request-Id')).toBe(id);
    const records = recordsOf(id);
    const incoming = records.find((r) => r.msg === 'incoming request');
    expect(incoming?.req).toMatchObject({ method, url: logged, remoteAddress: '127.0.0.1' });
    expect(records.find((r) => r.msg === 'request completed')?.res?.statusCode).toBe(
      response.status,
    );
    const text = lines.join('\n');
    for (const secret of [token, sealed, action]) expect(text).not.toContain(secret);
  });

  it('leaves other URLs as they are', async () => {
    const id = 'plain-url';
    await get('/services/rest/pals/enter?x=1&encryptedTokens=kept', {
      headers: { 'X-Request-Id': id },
    });
    expect(recordsOf(id)[0]?.req?.url).toBe('/services/rest/pals/enter?x=1&encryptedTokens=kept');
  });
});

describe('X-Request-Id', () => {
  it('is taken from the client when it is 1 to 64 letters, digits, ".", "_" or "-"', async () => {
    for (const id of ['a', 'Req-2026.11_29', 'x'.repeat(64)]) {
      const response = await get('/healthz', { headers: { 'X-Request-Id': id } });
      expect(response.headers.get('X-Request-Id')).toBe(id);
      expect(recordsOf(id).map((r) => r.msg)).toContain('incoming request');
    }
  });

  it('is replaced by a fresh UUID otherwise, and the given value is logged nowhere', async () => {
    const unsafe = [
      'x'.repeat(65),
      'two words',
      '<script>alert(1)</script>',
      '{"level":60,"msg":"forged"}',
      'caf\u00e9',
      'a,b',
    ];
    for (const id of unsafe) {
      const before = lines.length;
      const response = await get('/healthz', { headers: { 'X-Request-Id': id } });
      const given = response.headers.get('X-Request-Id')!;
      expect(given).toMatch(UUID);
      const logged = lines.slice(before).join('\n');
      expect(logged).toContain(given);
      expect(logged).not.toContain(id);
    }
  });

  it('is generated when absent', async () => {
    const response = await get('/healthz');
    expect(response.headers.get('X-Request-Id')).toMatch(UUID);
  });
});

describe('the session form', () => {
  it('logs the ids of posted fields the person may not edit, never their values', async () => {
    const enterprise = await createEnterprise(t.ctx, 'Log Form Inc');
    await deployPal(
      t.ctx,
      enterprise.id,
      join(import.meta.dirname, 'fixtures', 'workflow-pals', 'wf-tx'),
    );
    const sso = await createSso(t.ctx, enterprise.id, {
      firstName: 'Lou',
      lastName: 'Log',
      email: 'lou@log.test',
    });
    const tx = (await createTransaction(t.ctx, enterprise.id, 'wf-tx')).id;
    const token = await issueTransactionToken(t.ctx, enterprise.id, tx, sso, 'participant');
    const entered = await get(`/services/enter/${token}`);
    const cookie = entered.headers.get('set-cookie')!.split(';')[0]!;
    const sessionUrl = url + entered.headers.get('location')!;
    const page = await (await fetch(sessionUrl, { headers: { Cookie: cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const before = lines.length;
    const posted = await fetch(sessionUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf,
        action: 'note',
        text: 'fine',
        decision: 'SECRET-DECISION',
        office: 'SECRET-OFFICE',
      }).toString(),
    });
    expect(posted.status).toBe(303);
    const records = lines.slice(before).map(
      (line) =>
        JSON.parse(line) as LogRecord & {
          level: number;
          fields?: string[];
        },
    );
    const warning = records.find((r) => r.msg?.startsWith('posted values for fields'));
    expect(warning).toMatchObject({ level: 40, fields: ['decision', 'office'] });
    expect(lines.slice(before).join('\n')).not.toContain('SECRET-');
  });
});
