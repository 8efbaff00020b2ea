/**
 * The contract test: the generated client against the generated server skeleton,
 * over real HTTP on loopback, in JSON and in XML.
 *
 * 1. Every one of the 27 operations is called through the client's typed methods, in
 *    both formats, and answers what the in-memory handlers (./in-memory-service.ts)
 *    make of the input they received; the typed input the server saw is checked too.
 *    In XML every request and response body is validated against the XSDs (libxml2).
 * 2. Plain HTTP: negotiation, status codes and errorResults of docs/decisions.md ("Wire
 *    format", "Errors"), forms, BASIC authentication and configurable roots.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type OperationId } from '@pal-workflow/server-skeleton';
import { expectError, SchemaValidator } from '@pal-workflow/test-support';
import { decodeXml } from '@pal-workflow/validators';
import {
  BookmarkType,
  createPalClient,
  FieldType,
  PalApiError,
  type ConsoleContent,
  type PalClient,
  type ServiceRequest,
  type TransactionContent,
  type WireFormat,
} from '../src/index.js';
import { clientOperations } from '../src/generated/operations.gen.js';
import {
  ENTRY_BASE,
  PAL_FIXTURES,
  PASSWORD,
  startService,
  USERNAME,
  type RunningService,
} from './in-memory-service.js';

const validator = new SchemaValidator();
afterAll(() => validator.dispose());

const ALL_OPERATIONS = Object.keys(operations).sort() as OperationId[];
const AUTH = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`;
const PAL_NS = 'urn:pal-workflow:pal';
const SERVICES_NS = 'urn:pal-workflow:services';

const pal = (id: string) => {
  const fixture = PAL_FIXTURES.find((p) => p.info.id === id);
  if (!fixture) throw new Error(`no fixture ${id}`);
  return fixture.info;
};

// ------------------------------------------------------------------ fixtures

const postData = [
  { name: 'amount', value: '12.50' },
  { name: 'note', value: 'a < b & "c" \'d\'' },
  { name: 'empty', value: '' },
  { name: 'spaces', value: '  padded  ' },
  { name: 'lines', value: 'line1\r\nline2\ttab' },
  { name: 'unicode', value: 'Zoë ✓ 😀' },
  { name: 'onlyName' },
];

const consoleContent: ConsoleContent = {
  postData,
  documents: [
    {
      content: 'JVBERi0xLjQK',
      contentType: 'application/pdf',
      filename: 'form.pdf',
      palType: 'DOCUMENT',
      digest: 'q83vEjRWeJA=',
      bookmarks: [{ line: 3, text: 'start here', type: BookmarkType.TODO, mnemonic: 65535 }],
      description: 'the expense form',
      font: 'Helvetica',
      fields: [
        {
          id: 'amount',
          value: '12.50',
          roles: 'owner',
          type: FieldType.TEXT,
          x: 10,
          y: -20,
          width: 100,
          height: 12,
          page: 1,
          palDefined: true,
        },
        {
          id: 'ok',
          value: 'true',
          type: FieldType.CHECKBOXCHECKED,
          x: 0,
          y: 0,
          width: 8,
          height: 8,
          page: 2,
          palDefined: false,
        },
      ],
      signatures: [
        {
          id: 'sig-1',
          type: 'DRAW',
          role: 'owner',
          required: true,
          recordTime: 2147483647,
          page: 1,
          x: 1,
          y: 2,
          customWidth: 300,
          customHeight: -4,
        },
      ],
    },
  ],
  images: [{ filename: 'logo.png', contentType: 'image/png', content: 'iVBORw0KGgo=' }],
  styles: [{ filename: 'site.css', contentType: 'text/css', content: 'Ym9keXt9', bookmarks: [] }],
  payload: 'aGVsbG8gd29ybGQ=',
};
// An empty list member is an empty array in JSON and nothing at all in XML (a list member
// has no wrapper element, docs/decisions.md, "Wire format"), so the server receives it as absent.
const { bookmarks: _emptyBookmarks, ...styleWithoutBookmarks } = consoleContent.styles![0]!;
const consoleContentAsXml = { ...consoleContent, styles: [styleWithoutBookmarks] };

const transactionContent: TransactionContent = {
  postData: [
    { name: 'decision', value: 'approve' },
    { name: 'comment', value: '<b>fine</b> & done' },
  ],
  payload: 'AAECAwQFBgf/',
};

const serviceRequest: ServiceRequest = {
  payload: {
    data: { 'a b&c<d>': 'line1\r\nline2', empty: '', unicode: 'Zoë ✓' },
    dataMaps: {
      customer: { name: 'customer', entries: { id: '42', 'full name': "Zoë O'Brien" } },
      none: { name: 'none', entries: {} },
    },
    dataLists: {
      lines: {
        name: 'lines',
        columns: ['sku', 'qty'],
        rows: [
          ['A-1', '2'],
          ['B-2', ''],
        ],
      },
      single: { name: 'single', columns: ['only'], rows: [['x']] },
    },
  },
  sizeLimit: 4096,
  listLimit: 50,
  paging: true,
  pageSize: 25,
  page: 2,
  debug: true,
};

const FALSE_SEARCH_FLAGS = {
  exactName: false,
  exactDescription: false,
  exactCategory: false,
  startRecord: 0,
  includeTest: false,
};
const FALSE_PAL_SEARCH_FLAGS = {
  ...FALSE_SEARCH_FLAGS,
  exactPublisher: false,
  includeInstalled: false,
  matchAny: false,
};

// ------------------------------------------------------------------ helpers

interface Exchange {
  method: string;
  path: string;
  requestType: string | null;
  requestBody: string | undefined;
  status: number;
  responseType: string;
  responseBody: string;
}

/** A fetch that keeps what went over the wire, before the client's middleware decodes it. */
function recordingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    const body = init?.body;
    log.push({
      method: init?.method ?? 'GET',
      path: new URL(String(input)).pathname,
      requestType: headers.get('Content-Type'),
      requestBody:
        typeof body === 'string'
          ? body
          : body instanceof URLSearchParams
            ? body.toString()
            : undefined,
      status: response.status,
      responseType: response.headers.get('Content-Type') ?? '',
      responseBody: await response.clone().text(),
    });
    return response;
  };
}

/** The operation of a request, by the generated client's route table. */
function operationOf(
  method: string,
  path: string,
  roots = { service: 'services', user: 'user' },
): string | undefined {
  return clientOperations.find(
    (op) =>
      op.method === method &&
      new RegExp(op.pattern.replace('{service}', roots.service).replace('{user}', roots.user)).test(
        path,
      ),
  )?.id;
}

/** Name and namespace of an XML document's root element. */
function rootOf(xml: string): { name: string; namespace: string | undefined } {
  const start =
    /<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)((?:\s+[^\s=/>]+\s*=\s*"[^"]*")*)\s*\/?>/.exec(
      xml.replace(/^\s*<\?xml[^>]*\?>/, ''),
    );
  if (!start) throw new Error(`no root element in ${xml}`);
  const qname = start[1]!;
  const [prefix, name] = qname.includes(':') ? qname.split(':') : [undefined, qname];
  const attributes = Object.fromEntries(
    [...start[2]!.matchAll(/([^\s=]+)\s*=\s*"([^"]*)"/g)].map((m) => [m[1], m[2]]),
  );
  return { name: name!, namespace: attributes[prefix ? `xmlns:${prefix}` : 'xmlns'] };
}

async function expectApiError(
  call: Promise<unknown>,
  status: number,
  code: string,
): Promise<PalApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PalApiError);
  const apiError = error as PalApiError;
  expect(apiError.status).toBe(status);
  expect(apiError.code).toBe(code);
  expect(apiError.result?.success).toBe(false);
  return apiError;
}

// ------------------------------------------------------------------ 1. the generated client

describe.each(['json', 'xml'] as const)('the generated client in %s', (format: WireFormat) => {
  let service: RunningService;
  let client: PalClient;
  const exchanges: Exchange[] = [];
  const mediaType = format === 'xml' ? 'application/xml' : 'application/json';
  const inputs = () => service.state.inputs;
  const lastExchange = () => exchanges.at(-1)!;

  beforeAll(async () => {
    service = await startService();
    client = createPalClient({
      baseUrl: service.baseUrl,
      username: USERNAME,
      password: PASSWORD,
      format,
      fetch: recordingFetch(exchanges),
    });
  });
  afterAll(() => service?.close());

  it('pals area: P1 search with typed headers and X-Total-Count, P2 get, P3 entry URL', async () => {
    expect(await client.pals.getPal({ id: 'expense-approval' })).toEqual(pal('expense-approval'));
    expect(inputs().getPal).toEqual({ params: { id: 'expense-approval' } });
    // optional members absent, a string with leading and trailing blanks, non-ASCII
    expect(await client.pals.getPal({ id: 'leave-request' })).toEqual(pal('leave-request'));

    const found = await client.pals.searchPalsRaw({
      name: 'EXPENSE',
      includeTest: true,
      startRecord: 1,
    });
    expect(found.raw.headers.get('X-Total-Count')).toBe('3');
    expect(await found.value()).toEqual([pal('expense-sandbox'), pal('travel-expenses')]);
    expect(inputs().searchPals).toEqual({
      search: { ...FALSE_PAL_SEARCH_FLAGS, name: 'EXPENSE', includeTest: true, startRecord: 1 },
    });

    // one item, then none: the XML list wrapper with one and with no members
    const one = await client.pals.searchPalsRaw({ name: 'Expense Approval', exactName: true });
    expect(one.raw.headers.get('X-Total-Count')).toBe('1');
    expect(await one.value()).toEqual([pal('expense-approval')]);
    expect(inputs().searchPals?.search.exactName).toBe(true);
    const none = await client.pals.searchPalsRaw({ name: 'expense approval', exactName: true });
    expect(none.raw.headers.get('X-Total-Count')).toBe('0');
    expect(await none.value()).toEqual([]);

    // a header value beyond ASCII (Latin-1 is all a header can carry)
    expect(await client.pals.searchPals({ name: 'FÜR ZOË' })).toEqual([pal('leave-request')]);
    expect(inputs().searchPals?.search.name).toBe('FÜR ZOË');

    // no search headers at all: test pals hidden
    expect(await client.pals.searchPals({})).toEqual(
      PAL_FIXTURES.filter((p) => !p.test).map((p) => p.info),
    );
    expect(inputs().searchPals).toEqual({ search: FALSE_PAL_SEARCH_FLAGS });

    expect(await client.pals.createPalToken({ palId: 'expense-approval', userSSO: 'auto' })).toBe(
      `${ENTRY_BASE}expense-approval.auto`,
    );
    expect(inputs().createPalToken).toEqual({
      params: { palId: 'expense-approval' },
      form: { userSSO: 'auto' },
    });

    await expectApiError(client.pals.getPal({ id: 'no-such-pal' }), 404, 'NOT_FOUND');
    expect(lastExchange().responseType).toMatch(new RegExp(`^${mediaType}`));
  });

  it('console area: C1 to C7', async () => {
    const listed = await client.console.listConsolePalsRaw({
      category: 'hr',
      matchAny: true,
      exactCategory: false,
    });
    expect(listed.raw.headers.get('X-Total-Count')).toBe('1');
    expect(await listed.value()).toEqual([pal('leave-request')]);
    expect(inputs().listConsolePals).toEqual({
      search: { ...FALSE_PAL_SEARCH_FLAGS, category: 'hr', matchAny: true },
    });
    expect(await client.console.listConsolePals({})).toEqual([
      pal('expense-approval'),
      pal('leave-request'),
    ]);

    expect(
      await client.console.runConsolePal({ palId: 'leave-request', consoleContent: { postData } }),
    ).toEqual([
      ...postData,
      { name: 'palId', value: 'leave-request' },
      { name: 'user', value: USERNAME },
    ]);
    expect(inputs().runConsolePal).toEqual({
      params: { palId: 'leave-request' },
      body: { postData },
    });

    const grant = { palId: 'leave-request', ssoId: 'sso-x', useEnterpriseProfile: false };
    expect(await client.console.grantConsolePalAccess(grant)).toBe(true);
    expect(inputs().grantConsolePalAccess).toEqual({
      params: { palId: 'leave-request' },
      form: { ssoId: 'sso-x', useEnterpriseProfile: false },
    });
    expect(await client.console.deleteConsolePalAccess(grant)).toBe(true);
    expect(inputs().deleteConsolePalAccess).toEqual(inputs().grantConsolePalAccess);
    expect(await client.console.deleteConsolePalAccess(grant)).toBe(false);
    // the grant was made for the personal profile: the enterprise profile has none
    await client.console.grantConsolePalAccess(grant);
    expect(
      await client.console.deleteConsolePalAccess({ ...grant, useEnterpriseProfile: true }),
    ).toBe(false);
    expect(inputs().deleteConsolePalAccess?.form.useEnterpriseProfile).toBe(true);
    // without the optional field
    expect(
      await client.console.deleteConsolePalAccess({ palId: 'leave-request', ssoId: 'sso-x' }),
    ).toBe(true);
    expect(inputs().deleteConsolePalAccess).toEqual({
      params: { palId: 'leave-request' },
      form: { ssoId: 'sso-x' },
    });

    const document = { order: { item: ['a', 'b'], total: 3 }, customer: { name: 'Zoë' } };
    expect(
      await client.console.executeConsoleWorkflow({
        palId: 'expense-approval',
        requestBody: document,
      }),
    ).toEqual({
      success: true,
      palId: 'expense-approval',
      data: [
        { name: 'contentType', value: 'application/json' },
        { name: 'text', value: JSON.stringify(document) },
      ],
    });
    expect(inputs().executeConsoleWorkflow).toEqual({
      params: { palId: 'expense-approval' },
      body: { text: JSON.stringify(document), contentType: 'application/json' },
    });

    const action = 'open <form> & "go"';
    expect(
      await client.console.createConsoleToken({
        palId: 'leave-request',
        ssoId: 'sso-x',
        useEnterpriseProfile: true,
        action,
      }),
    ).toBe(`leave-request|sso-x|true|${action}`);
    expect(inputs().createConsoleToken).toEqual({
      params: { palId: 'leave-request' },
      form: { ssoId: 'sso-x', useEnterpriseProfile: true, action },
    });

    const result = await client.console.runConsoleWorkflow({
      palId: 'leave-request',
      consoleContent,
    });
    expect(inputs().runConsoleWorkflow).toEqual({
      params: { palId: 'leave-request' },
      body: format === 'xml' ? consoleContentAsXml : consoleContent,
    });
    expect(result).toEqual({
      success: true,
      // A nil member (xsi:nil in XML, null in JSON) reaches the caller as null.
      messages: [
        { message: '1 documents, 1 images, 1 styles', type: null },
        { message: `run by ${USERNAME}`, type: 'INFO' },
      ],
      data: postData,
      payload: {
        filename: 'payload.bin',
        contentType: 'application/octet-stream',
        content: consoleContent.payload,
      },
      palId: 'leave-request',
      token: 'amount=12.50,ok=true',
      palInfoList: [pal('leave-request')],
    });
    if (format === 'xml') expect(lastExchange().responseBody).toMatch(/<type xsi:nil="true"\/>/);
    else
      expect(JSON.parse(lastExchange().responseBody).messages[0]).toEqual({
        message: '1 documents, 1 images, 1 styles',
        type: null,
      });
  });

  it('transactions area: T1 to T10', async () => {
    const id = await client.transactions.createTransaction({ palId: 'travel-expenses' });
    expect(id).toMatch(/^tx-\d+$/);
    expect(inputs().createTransaction).toEqual({ form: { palId: 'travel-expenses' } });
    expect(await client.transactions.getTransaction({ id })).toEqual({
      id,
      name: 'Travel Expenses',
      status: 'NEW',
      test: false,
    });
    expect(inputs().getTransaction).toEqual({ params: { id } });
    expect(await client.transactions.getTransaction({ id: 'tx-seed' })).toEqual(
      service.state.transactions.get('tx-seed')!.info,
    );
    await expectApiError(
      client.transactions.createTransaction({ palId: 'nope' }),
      404,
      'NOT_FOUND',
    );

    expect(
      await client.transactions.createTransactionToken({
        transactionId: 'tx-seed',
        userSSO: 'sso-a',
      }),
    ).toBe('participant:tx-seed:sso-a');
    expect(inputs().createTransactionToken).toEqual({
      params: { transactionId: 'tx-seed' },
      form: { userSSO: 'sso-a' },
    });
    expect(
      await client.transactions.createAnonymousToken({
        transactionId: id,
        userSSO: 'sso-a',
        action: 'review',
      }),
    ).toBe(`anonymous:${id}:sso-a:review`);
    expect(inputs().createAnonymousToken).toEqual({
      params: { transactionId: id },
      form: { userSSO: 'sso-a', action: 'review' },
    });
    await client.transactions.createAnonymousToken({ transactionId: 'tx-seed', userSSO: 'sso-a' });
    expect(inputs().createAnonymousToken).toEqual({
      params: { transactionId: 'tx-seed' },
      form: { userSSO: 'sso-a' },
    });

    const bySso = await client.transactions.searchTransactionsRaw({ sso: 'sso-a' });
    expect(bySso.raw.headers.get('X-Total-Count')).toBe('2');
    expect((await bySso.value()).map((t) => t.id)).toEqual(['tx-seed', id]);
    expect(inputs().searchTransactions).toEqual({
      search: { ...FALSE_SEARCH_FLAGS, sso: 'sso-a' },
    });

    const search = {
      name: 'TRAVEL',
      palId: 'travel-expenses',
      status: 'NEW',
      systemStatus: 'RUNNING',
      webServiceStatus: 'IDLE',
      category: 'x',
      description: 'y',
      exactDescription: true,
      exactCategory: false,
      includeTest: true,
      startRecord: 0,
    };
    expect(await client.transactions.searchTransactions(search)).toEqual([
      { id, name: 'Travel Expenses', status: 'NEW', test: false },
    ]);
    expect(inputs().searchTransactions).toEqual({ search: { ...FALSE_SEARCH_FLAGS, ...search } });
    const skipped = await client.transactions.searchTransactionsRaw({
      sso: 'sso-a',
      startRecord: 1,
    });
    expect(skipped.raw.headers.get('X-Total-Count')).toBe('2');
    expect((await skipped.value()).map((t) => t.id)).toEqual([id]);

    // three roles of sso-a: two on tx-seed, one on the new transaction
    expect(
      await client.transactions.removeTransactionRole({
        transactionId: 'tx-seed',
        userSSO: 'sso-a',
      }),
    ).toBe(2);
    expect(inputs().removeTransactionRole).toEqual({
      params: { transactionId: 'tx-seed' },
      form: { userSSO: 'sso-a' },
    });
    expect(await client.transactions.removeAllRoles({ userSSO: 'sso-a' })).toBe(1);
    expect(inputs().removeAllRoles).toEqual({ form: { userSSO: 'sso-a' } });
    expect(await client.transactions.removeAllRoles({ userSSO: 'sso-a' })).toBe(0);

    const encrypted = { encryptedToken: 'a+b/c==', encryptedAction: 'x y&z=1?#' };
    expect(await client.transactions.getTransactionFromEmail(encrypted)).toEqual({
      success: true,
      messages: [{ message: `resolved for ${USERNAME}`, type: null }],
      token: encrypted.encryptedToken,
      action: encrypted.encryptedAction,
      emailType: 'LINK',
      recordsProcessed: 0,
    });
    expect(inputs().getTransactionFromEmail).toEqual({ query: encrypted });

    expect(
      await client.transactions.runTransactionWorkflow({
        transactionId: 'tx-seed',
        transactionContent,
      }),
    ).toEqual({
      success: true,
      data: transactionContent.postData,
      payload: { content: transactionContent.payload },
      transactionId: 'tx-seed',
      transactionInfoList: [service.state.transactions.get('tx-seed')!.info],
      palId: 'expense-approval',
      recordsProcessed: 2,
    });
    expect(inputs().runTransactionWorkflow).toEqual({
      params: { transactionId: 'tx-seed' },
      body: transactionContent,
    });

    expect(
      await client.transactions.runTransaction({ transactionId: id, transactionContent: {} }),
    ).toEqual([{ name: 'transactionId', value: id }]);
    expect(inputs().runTransaction).toEqual({ params: { transactionId: id }, body: {} });
    expect(
      await client.transactions.runTransaction({ transactionId: id, transactionContent }),
    ).toEqual([{ name: 'transactionId', value: id }, ...transactionContent.postData!]);
    await expectApiError(
      client.transactions.runTransaction({ transactionId: 'tx-none', transactionContent }),
      404,
      'NOT_FOUND',
    );
  });

  it('user area: U1 with a full ServiceRequest, and with none', async () => {
    const response = await client.user.runUserWorkflow({
      action: 'submit',
      workflow: 'expenses',
      serviceRequest,
    });
    expect(inputs().runUserWorkflow).toEqual({
      query: { action: 'submit', workflow: 'expenses' },
      body: serviceRequest,
    });
    expect(response).toEqual({
      success: true,
      action: 'submit',
      target: 'expenses',
      successMessage: `ran for ${USERNAME}`,
      data: JSON.stringify({ query: { action: 'submit', workflow: 'expenses' }, hasBody: true }),
      payload: serviceRequest.payload,
      currentPage: 2,
      totalPages: 25,
      listBindings: serviceRequest.payload!.data,
      debugInfo: {
        workflow: 'expenses',
        line: 4096,
        action: 'submit',
        callStack: ['lines', 'single'],
      },
    });

    const bare = await client.user.runUserWorkflow({ action: 'list' });
    expect(inputs().runUserWorkflow).toEqual({ query: { action: 'list' } });
    expect(bare).toEqual({
      success: true,
      action: 'list',
      successMessage: `ran for ${USERNAME}`,
      data: JSON.stringify({ query: { action: 'list' }, hasBody: false }),
      currentPage: 0,
      totalPages: 0,
      listBindings: {},
    });
  });

  it('enterprise area: E1 to E6', async () => {
    const person = {
      firstName: 'Zoë',
      lastName: "O'Brien & <Co>",
      email: `zoe.${format}@example.com`,
    };
    const sso = await client.enterprise.createSso(person);
    expect(sso).toMatch(/^sso-\d+$/);
    expect(inputs().createSso).toEqual({ form: person });
    await expectApiError(client.enterprise.createSso(person), 409, 'CONFLICT');

    expect(await client.enterprise.isEmailRegistered({ email: person.email })).toBe(true);
    expect(inputs().isEmailRegistered).toEqual({ query: { email: person.email } });
    expect(await client.enterprise.isEmailRegistered({ email: 'nobody@example.com' })).toBe(false);
    expect(await client.enterprise.getSsoStatus({ sso })).toBe('ACTIVE');
    expect(inputs().getSsoStatus).toEqual({ query: { sso } });

    const moved = {
      sso,
      firstName: 'Zoé',
      lastName: 'Brien',
      email: `zoe+new.${format}@example.com`,
    };
    expect(await client.enterprise.updateSso(moved)).toBe(true);
    expect(inputs().updateSso).toEqual({ form: moved });
    expect(await client.enterprise.isEmailRegistered({ email: person.email })).toBe(false);
    expect(await client.enterprise.isEmailRegistered({ email: moved.email })).toBe(true);

    const invited = await client.enterprise.inviteSso({ email: moved.email });
    expect(invited).toMatch(/^sso-\d+$/);
    expect(invited).not.toBe(sso);
    expect(inputs().inviteSso).toEqual({ form: { email: moved.email } });
    expect(await client.enterprise.getSsoStatus({ sso: invited })).toBe('PENDING_ACTIVATION');
    await expectApiError(
      client.enterprise.inviteSso({ email: 'nobody@example.com' }),
      404,
      'NOT_FOUND',
    );

    expect(await client.enterprise.deleteSso({ sso: invited })).toBe(true);
    expect(inputs().deleteSso).toEqual({ form: { sso: invited } });
    expect(await client.enterprise.getSsoStatus({ sso: invited })).toBe('DELETED');
    expect(await client.enterprise.getSsoStatus({ sso })).toBe('ACTIVE');
  });

  it('refuses wrong credentials with a PalApiError, before any handler runs', async () => {
    const calls = service.state.calls.length;
    const intruder = createPalClient({
      baseUrl: service.baseUrl,
      username: USERNAME,
      password: 'wrong',
      format,
    });
    const error = await expectApiError(
      intruder.pals.getPal({ id: 'expense-approval' }),
      401,
      'UNAUTHORIZED',
    );
    expect(error.response.headers.get('WWW-Authenticate')).toBe('Basic realm="pal"');
    await expectApiError(
      intruder.console.runConsoleWorkflow({ palId: 'x', consoleContent }),
      401,
      'UNAUTHORIZED',
    );
    expect(service.state.calls.length).toBe(calls);
  });

  it('reached all 27 operations, each answering 200 in the chosen format', () => {
    expect(ALL_OPERATIONS).toHaveLength(27);
    expect([...new Set(service.state.calls)].sort()).toEqual(ALL_OPERATIONS);
    const answered = new Set(
      exchanges.filter((e) => e.status === 200).map((e) => operationOf(e.method, e.path)),
    );
    expect([...answered].sort()).toEqual(ALL_OPERATIONS);
    for (const e of exchanges)
      expect(e.responseType, `${e.method} ${e.path}`).toMatch(
        new RegExp(`^${mediaType}; charset=utf-8$`),
      );
  });

  it(`sent and received ${format === 'xml' ? 'XML valid against the XSDs' : 'JSON'}`, () => {
    expect(exchanges.length).toBeGreaterThanOrEqual(ALL_OPERATIONS.length);
    const bodiesSent = new Set<string>();
    for (const e of exchanges) {
      const op = clientOperations.find((o) => o.id === operationOf(e.method, e.path));
      expect(op, `${e.method} ${e.path}`).toBeDefined();
      if (!op) continue;
      if (op.bodyRoot && e.requestBody !== undefined) {
        bodiesSent.add(op.id);
        expect(e.requestType, `${e.method} ${e.path}`).toBe(mediaType);
        if (format === 'xml') {
          validator.assertValid(e.requestBody);
          expect(rootOf(e.requestBody).name).toBe(op.bodyRoot);
        } else {
          expect(() => JSON.parse(e.requestBody!), e.requestBody).not.toThrow();
        }
      }
      if (format === 'json') {
        expect(() => JSON.parse(e.responseBody), e.responseBody).not.toThrow();
        continue;
      }
      validator.assertValid(e.responseBody);
      const root = rootOf(e.responseBody);
      expect(root.name).toBe(e.status === 200 ? op.responseRoot : 'errorResult');
      expect(root.namespace).toBe(
        op.responseRoot === 'ServiceResponse' && e.status === 200 ? SERVICES_NS : PAL_NS,
      );
    }
    // C2, C7, T6, T9 and U1 take a typed body (C5's caller-chosen document goes as JSON: it has no schema)
    expect([...bodiesSent].sort()).toEqual(
      clientOperations
        .filter((o) => o.bodyRoot)
        .map((o) => o.id)
        .sort(),
    );
    expect(bodiesSent.size).toBe(5);
  });
});

// ------------------------------------------------------------------ 2. plain HTTP

interface Answer {
  status: number;
  type: string;
  headers: Headers;
  text: string;
}

describe('HTTP rules, with plain fetch', () => {
  let service: RunningService;
  let base: string;

  beforeAll(async () => {
    service = await startService();
    base = service.baseUrl;
  });
  afterAll(() => service?.close());

  async function http(
    path: string,
    init: {
      method?: string;
      accept?: string;
      headers?: Record<string, string>;
      body?: NonNullable<RequestInit['body']>;
      auth?: string | null;
    } = {},
  ): Promise<Answer> {
    const headers = new Headers(init.headers);
    if (init.auth !== null) headers.set('Authorization', init.auth ?? AUTH);
    if (init.accept !== undefined) headers.set('Accept', init.accept);
    const response = await fetch(base + path, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers,
      body: init.body,
    });
    return {
      status: response.status,
      type: response.headers.get('Content-Type') ?? '',
      headers: response.headers,
      text: await response.text(),
    };
  }

  const palPath = '/services/rest/pals/expense-approval';

  it('answers XML when Accept is absent: a palInfo root in the pal namespace', async () => {
    const answer = await new Promise<{ status: number; type: string; text: string }>(
      (resolve, reject) => {
        const req = httpRequest(base + palPath, { headers: { Authorization: AUTH } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', text }),
          );
        });
        req.on('error', reject);
        req.end();
      },
    );
    expect(service.state.requests.at(-1)).toEqual({
      method: 'GET',
      url: palPath,
      accept: undefined,
    });
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('application/xml; charset=utf-8');
    validator.assertValid(answer.text);
    expect(rootOf(answer.text)).toEqual({ name: 'palInfo', namespace: PAL_NS });
    expect(decodeXml(answer.text, 'palInfo')).toEqual(pal('expense-approval'));
  });

  it('answers XML for */*, JSON for application/json', async () => {
    const any = await http(palPath, { accept: '*/*' });
    expect(service.state.requests.at(-1)?.accept).toBe('*/*');
    expect(any.type).toBe('application/xml; charset=utf-8');
    validator.assertValid(any.text);
    expect(rootOf(any.text)).toEqual({ name: 'palInfo', namespace: PAL_NS });

    const json = await http(palPath, { accept: 'application/json' });
    expect(json.status).toBe(200);
    expect(json.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(json.text)).toEqual(pal('expense-approval'));
    // absent optional members are left out, not null
    expect(
      JSON.parse(
        (await http('/services/rest/pals/travel-expenses', { accept: 'application/json' })).text,
      ),
    ).not.toHaveProperty('description');
  });

  it('answers text/plain for simple responses only; a list asked as text is a 406', async () => {
    const created = await http('/services/rest/enterprises/sso', {
      accept: 'text/plain',
      body: new URLSearchParams({ firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com' }),
    });
    expect(created.status).toBe(200);
    expect(created.type).toBe('text/plain; charset=utf-8');
    expect(created.text).toMatch(/^sso-\d+$/);

    for (const [email, expected] of [
      ['ann@example.com', 'true'],
      ['bob@example.com', 'false'],
    ] as const) {
      const registered = await http(
        `/services/rest/enterprises/sso/registered?email=${encodeURIComponent(email)}`,
        {
          accept: 'text/plain',
        },
      );
      expect(registered.status).toBe(200);
      expect(registered.type).toBe('text/plain; charset=utf-8');
      expect(registered.text).toBe(expected);
    }
    const status = await http(`/services/rest/enterprises/sso/status?sso=${created.text}`, {
      accept: 'text/plain',
    });
    expect(status.text).toBe('ACTIVE');
    const removed = await http('/services/rest/transactions/removeAllRoles', {
      accept: 'text/plain',
      body: new URLSearchParams({ userSSO: created.text }),
    });
    expect([removed.type, removed.text]).toEqual(['text/plain; charset=utf-8', '0']);

    const calls = service.state.calls.length;
    const list = await http('/services/rest/pals', { accept: 'text/plain' });
    expect(expectError(list, 406, 'NOT_ACCEPTABLE')[0]).toContain('text/plain');
    expectError(await http(palPath, { accept: 'text/plain' }), 406, 'NOT_ACCEPTABLE');
    expectError(await http(palPath, { accept: 'text/html, image/png' }), 406, 'NOT_ACCEPTABLE');
    expectError(
      await http(palPath, { accept: 'application/json;q=0, application/xml;q=0' }),
      406,
      'NOT_ACCEPTABLE',
    );
    expect(service.state.calls.length).toBe(calls);
  });

  it('honours q-values', async () => {
    const json = await http(palPath, { accept: 'application/xml;q=0.2, application/json;q=0.9' });
    expect(json.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(json.text)).toEqual(pal('expense-approval'));

    const xml = await http(palPath, { accept: 'application/xml;q=0.9, application/json;q=0.2' });
    expect(xml.type).toBe('application/xml; charset=utf-8');

    const structured = await http(palPath, { accept: 'text/plain;q=1, application/json;q=0.1' });
    expect(structured.status).toBe(200);
    expect(structured.type).toBe('application/json; charset=utf-8');

    const simple = await http('/services/rest/enterprises/sso/registered?email=x%40example.com', {
      accept: 'text/plain;q=1, application/json;q=0.1',
    });
    expect([simple.type, simple.text]).toEqual(['text/plain; charset=utf-8', 'false']);
    const simpleJson = await http(
      '/services/rest/enterprises/sso/registered?email=x%40example.com',
      {
        accept: 'text/plain;q=0.1, application/json',
      },
    );
    expect([simpleJson.type, simpleJson.text]).toEqual([
      'application/json; charset=utf-8',
      'false',
    ]);
  });

  it('answers 415 for a body type the operation does not take', async () => {
    const calls = service.state.calls.length;
    const csv = await http('/services/rest/console/leave-request/runWorkflow', {
      headers: { 'Content-Type': 'text/csv' },
      body: 'name,value\na,b\n',
    });
    expectError(csv, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const jsonOnForm = await http('/services/rest/console/leave-request/grantConsolePalAccess', {
      accept: 'application/json',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ssoId: 'sso-x', useEnterpriseProfile: true }),
    });
    expectError(jsonOnForm, 415, 'UNSUPPORTED_MEDIA_TYPE', 'json');
    const formOnBody = await http('/services/rest/console/leave-request/runWorkflow', {
      body: new URLSearchParams({ payload: 'aGk=' }),
    });
    expectError(formOnBody, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(service.state.calls.length).toBe(calls);
  });

  it('answers 400 with an errorResult for bad values, bodies and missing parameters', async () => {
    const calls = service.state.calls.length;
    const runWorkflow = '/services/rest/console/leave-request/runWorkflow';

    expect(
      expectError(
        await http('/services/rest/pals', { headers: { startRecord: 'abc' } }),
        400,
        'INVALID_ARGUMENT',
      )[0],
    ).toMatch(/startRecord/);
    expect(
      expectError(
        await http('/services/rest/pals', { headers: { startRecord: '-1' } }),
        400,
        'INVALID_ARGUMENT',
      )[0],
    ).toMatch(/startRecord/);
    expect(
      expectError(
        await http('/services/rest/transactions', { headers: { exactName: 'maybe' } }),
        400,
        'INVALID_ARGUMENT',
      )[0],
    ).toMatch(/exactName/);
    expect(
      expectError(
        await http('/services/rest/console/consolePalList', { headers: { includeTest: 'yes' } }),
        400,
        'INVALID_ARGUMENT',
      )[0],
    ).toMatch(/includeTest/);

    const doctype =
      '<?xml version="1.0"?><!DOCTYPE c [<!ENTITY e "boom">]>' +
      `<pal:consoleContent xmlns:pal="${PAL_NS}"><postData><name>x</name><value>&e;</value></postData></pal:consoleContent>`;
    expect(
      expectError(
        await http(runWorkflow, { headers: { 'Content-Type': 'application/xml' }, body: doctype }),
        400,
        'INVALID_ARGUMENT',
      )[0],
    ).toMatch(/DOCTYPE/);

    const missing = await http('/services/rest/console/leave-request/grantConsolePalAccess', {
      body: new URLSearchParams({ useEnterpriseProfile: 'true' }),
    });
    expect(expectError(missing, 400, 'INVALID_ARGUMENT')[0]).toMatch(/ssoId/);
    expectError(
      await http('/services/rest/transactions', { body: new URLSearchParams() }),
      400,
      'INVALID_ARGUMENT',
    );
    const twice = await http('/services/rest/transactions', {
      body: new URLSearchParams([
        ['palId', 'a'],
        ['palId', 'b'],
      ]),
    });
    expect(expectError(twice, 400, 'INVALID_ARGUMENT')[0]).toMatch(/palId/);
    expect(
      expectError(
        await http('/services/rest/enterprises/sso/registered'),
        400,
        'INVALID_ARGUMENT',
      )[0],
    ).toMatch(/email/);

    const unknown = await http(runWorkflow, {
      accept: 'application/json',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ postData: [{ name: 'a', value: 'b' }], bogus: 1 }),
    });
    expect(expectError(unknown, 400, 'INVALID_ARGUMENT', 'json').join('\n')).toMatch(/bogus/);
    const nested = await http(runWorkflow, {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ postData: [{ name: 'a', value: 'b', extra: 'c' }] }),
    });
    expect(expectError(nested, 400, 'INVALID_ARGUMENT').join('\n')).toMatch(/extra/);
    const unknownXml = await http(runWorkflow, {
      headers: { 'Content-Type': 'application/xml' },
      body: `<pal:consoleContent xmlns:pal="${PAL_NS}"><bogus>1</bogus></pal:consoleContent>`,
    });
    expect(expectError(unknownXml, 400, 'INVALID_ARGUMENT').join('\n')).toMatch(/bogus/);
    const wrongRoot = await http(runWorkflow, {
      headers: { 'Content-Type': 'application/xml' },
      body: `<pal:transactionContent xmlns:pal="${PAL_NS}"/>`,
    });
    expectError(wrongRoot, 400, 'INVALID_ARGUMENT');
    expectError(
      await http(runWorkflow, {
        headers: { 'Content-Type': 'application/json' },
        body: '{"postData": [',
      }),
      400,
      'INVALID_ARGUMENT',
    );
    expectError(
      await http(runWorkflow, {
        headers: { 'Content-Type': 'application/json' },
        body: '{"payload": 42}',
      }),
      400,
      'INVALID_ARGUMENT',
    );
    expect(service.state.calls.length).toBe(calls);
  });

  it('answers 401 with WWW-Authenticate without credentials and with wrong ones', async () => {
    const calls = service.state.calls.length;
    const wrong = `Basic ${Buffer.from(`${USERNAME}:nope`).toString('base64')}`;
    for (const auth of [null, wrong, 'Bearer abc', 'Basic !!!']) {
      const answer = await http(palPath, { auth });
      expectError(answer, 401, 'UNAUTHORIZED');
      expect(answer.headers.get('WWW-Authenticate')).toBe('Basic realm="pal"');
      const post = await http('/services/rest/console/leave-request/runWorkflow', {
        auth,
        accept: 'application/json',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      expectError(post, 401, 'UNAUTHORIZED', 'json');
      expect(post.headers.get('WWW-Authenticate')).toBe('Basic realm="pal"');
    }
    expect(service.state.calls.length).toBe(calls);
  });

  it('writes errors in JSON when Accept asks for JSON', async () => {
    const missing = await http('/services/rest/pals/no-such-pal', { accept: 'application/json' });
    expect(missing.status).toBe(404);
    expect(missing.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(missing.text)).toEqual({
      success: false,
      messages: [{ message: 'pal no-such-pal does not exist', type: 'NOT_FOUND' }],
    });
    expectError(
      await http('/services/rest/pals', {
        accept: 'application/json',
        headers: { startRecord: 'abc' },
      }),
      400,
      'INVALID_ARGUMENT',
      'json',
    );
    expectError(
      await http('/services/rest/pals/no-such-pal', {
        accept: 'application/xml;q=0.5, application/json',
      }),
      404,
      'NOT_FOUND',
      'json',
    );
    expectError(await http('/services/rest/pals/no-such-pal'), 404, 'NOT_FOUND', 'xml');
  });

  it('takes forms as urlencoded and as multipart', async () => {
    const path = '/services/rest/console/leave-request/token';
    const urlencoded = await http(path, {
      accept: 'application/json',
      body: new URLSearchParams({
        ssoId: 'sso-9',
        useEnterpriseProfile: 'true',
        action: 'a&b=c d+e',
      }),
    });
    expect(urlencoded.status).toBe(200);
    expect(JSON.parse(urlencoded.text)).toBe('leave-request|sso-9|true|a&b=c d+e');
    expect(service.state.inputs.createConsoleToken).toEqual({
      params: { palId: 'leave-request' },
      form: { ssoId: 'sso-9', useEnterpriseProfile: true, action: 'a&b=c d+e' },
    });

    const form = new FormData();
    form.set('ssoId', 'sso-10');
    form.set('useEnterpriseProfile', 'false');
    form.set('action', 'ünïcode ✓ & <more>');
    const multipart = await http(path, { body: form });
    expect(multipart.status, multipart.text).toBe(200);
    validator.assertValid(multipart.text);
    expect(rootOf(multipart.text)).toEqual({ name: 'string', namespace: PAL_NS });
    expect(decodeXml(multipart.text, 'string')).toBe(
      'leave-request|sso-10|false|ünïcode ✓ & <more>',
    );
    expect(service.state.inputs.createConsoleToken).toEqual({
      params: { palId: 'leave-request' },
      form: { ssoId: 'sso-10', useEnterpriseProfile: false, action: 'ünïcode ✓ & <more>' },
    });

    const update = new FormData();
    update.set('palId', 'expense-approval');
    const created = await http('/services/rest/transactions', {
      accept: 'application/json',
      body: update,
    });
    expect(created.status).toBe(200);
    expect(service.state.transactions.has(JSON.parse(created.text) as string)).toBe(true);

    const missing = new FormData();
    missing.set('useEnterpriseProfile', 'true');
    expect(expectError(await http(path, { body: missing }), 400, 'INVALID_ARGUMENT')[0]).toMatch(
      /ssoId/,
    );
  });

  it("takes U1's action and workflow as form fields or as query parameters", async () => {
    const path = '/user/runWorkflow';
    const fromForm = await http(path, {
      accept: 'application/json',
      body: new URLSearchParams({ action: 'submit', workflow: 'expenses' }),
    });
    expect(fromForm.status, fromForm.text).toBe(200);
    expect(service.state.inputs.runUserWorkflow).toEqual({
      query: { action: 'submit', workflow: 'expenses' },
    });
    expect(JSON.parse(fromForm.text)).toMatchObject({
      success: true,
      action: 'submit',
      target: 'expenses',
    });

    const multipart = new FormData();
    multipart.set('action', 'approve');
    multipart.set('workflow', 'leave');
    const fromMultipart = await http(path, { accept: 'application/json', body: multipart });
    expect(JSON.parse(fromMultipart.text)).toMatchObject({ action: 'approve', target: 'leave' });
    expect(service.state.inputs.runUserWorkflow).toEqual({
      query: { action: 'approve', workflow: 'leave' },
    });

    const fromQuery = await http(`${path}?action=list&workflow=${encodeURIComponent('my flow')}`, {
      accept: 'application/json',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(serviceRequest),
    });
    expect(fromQuery.status, fromQuery.text).toBe(200);
    expect(service.state.inputs.runUserWorkflow).toEqual({
      query: { action: 'list', workflow: 'my flow' },
      body: serviceRequest,
    });
    expect(JSON.parse(fromQuery.text)).toMatchObject({
      action: 'list',
      target: 'my flow',
      payload: serviceRequest.payload,
    });

    // an XML ServiceRequest in the services namespace; the answer is a ServiceResponse there too
    const xmlBody =
      `<svc:ServiceRequest xmlns:svc="${SERVICES_NS}"><payload><data><entry><key>k</key><value>v &amp; w</value></entry></data>` +
      '<dataMaps/><dataLists/></payload><sizeLimit>10</sizeLimit><listLimit>5</listLimit><paging>false</paging>' +
      '<pageSize>7</pageSize><page>1</page><debug>false</debug></svc:ServiceRequest>';
    validator.assertValid(xmlBody);
    const xml = await http(`${path}?action=show&workflow=w`, {
      headers: { 'Content-Type': 'text/xml' },
      body: xmlBody,
    });
    expect(xml.status, xml.text).toBe(200);
    expect(xml.type).toBe('application/xml; charset=utf-8');
    validator.assertValid(xml.text);
    expect(rootOf(xml.text)).toEqual({ name: 'ServiceResponse', namespace: SERVICES_NS });
    expect(decodeXml(xml.text, 'ServiceResponse')).toMatchObject({
      action: 'show',
      target: 'w',
      currentPage: 1,
      totalPages: 7,
      listBindings: { k: 'v & w' },
    });
    expect(service.state.inputs.runUserWorkflow?.body?.payload?.data).toEqual({ k: 'v & w' });
  });

  it('takes a caller-chosen XML document on C5, as text (its names are data, __proto__ too)', async () => {
    const xml =
      '<order xmlns="urn:example"><item>a</item><item>b &amp; c</item><__proto__>x</__proto__><constructor/></order>';
    const answer = await http('/services/rest/console/expense-approval/executeWorkflow', {
      accept: 'application/json',
      headers: { 'Content-Type': 'application/xml' },
      body: xml,
    });
    expect(answer.status, answer.text).toBe(200);
    expect(service.state.inputs.executeConsoleWorkflow).toEqual({
      params: { palId: 'expense-approval' },
      body: { text: xml, contentType: 'application/xml' },
    });
    expect(JSON.parse(answer.text)).toEqual({
      success: true,
      palId: 'expense-approval',
      data: [
        { name: 'contentType', value: 'application/xml' },
        { name: 'text', value: xml },
      ],
    });
  });

  it('refuses a C5 document that is not well-formed XML, has a DOCTYPE, or is no JSON object: 400', async () => {
    for (const [type, body] of [
      ['application/xml', '<order><item>a</order>'],
      ['application/xml', '<!DOCTYPE x [<!ENTITY e "e">]><order>&e;</order>'],
      ['application/json', '{"order": '],
      ['application/json', '[1, 2]'],
    ] as const) {
      const answer = await http('/services/rest/console/expense-approval/executeWorkflow', {
        accept: 'application/json',
        headers: { 'Content-Type': type },
        body,
      });
      expect(answer.status, body).toBe(400);
    }
  });
});

// ------------------------------------------------------------------ custom roots

describe.each([
  { where: 'at the top of the host', prefix: '' },
  { where: 'below a path', prefix: '/pal-api' },
])('custom roots, $where', ({ prefix }) => {
  let service: RunningService;
  let base: string;

  beforeAll(async () => {
    service = await startService({
      serviceRoot: 'svc',
      userRoot: 'u',
      prefix: prefix || undefined,
    });
    base = service.baseUrl + prefix;
  });
  afterAll(() => service?.close());

  it('serves the operations under the configured roots only', async () => {
    const get = (path: string) =>
      fetch(base + path, { headers: { Authorization: AUTH, Accept: 'application/json' } });
    const post = (path: string) =>
      fetch(base + path, { method: 'POST', headers: { Authorization: AUTH } });
    const found = await get('/svc/rest/pals/expense-approval');
    expect(found.status).toBe(200);
    expect(await found.json()).toEqual(pal('expense-approval'));
    expect((await get('/services/rest/pals/expense-approval')).status).toBe(404);
    expect((await post('/u/runWorkflow?action=a')).status).toBe(200);
    expect(service.state.inputs.runUserWorkflow).toEqual({ query: { action: 'a' } });
    expect((await post('/user/runWorkflow?action=a')).status).toBe(404);
  });

  it.each(['json', 'xml'] as const)(
    'is reachable through a client made with the same roots, in %s',
    async (format) => {
      const exchanges: Exchange[] = [];
      const client = createPalClient({
        baseUrl: `${base}/`,
        username: USERNAME,
        password: PASSWORD,
        format,
        serviceRoot: 'svc',
        userRoot: 'u',
        fetch: recordingFetch(exchanges),
      });
      expect(await client.pals.getPal({ id: 'leave-request' })).toEqual(pal('leave-request'));
      expect(
        await client.console.runConsolePal({
          palId: 'leave-request',
          consoleContent: { postData },
        }),
      ).toEqual([
        ...postData,
        { name: 'palId', value: 'leave-request' },
        { name: 'user', value: USERNAME },
      ]);
      const id = await client.transactions.createTransaction({ palId: 'expense-approval' });
      expect((await client.transactions.getTransaction({ id })).name).toBe('Expense Approval');
      expect(
        await client.user.runUserWorkflow({ action: 'go', workflow: 'w', serviceRequest }),
      ).toMatchObject({
        action: 'go',
        target: 'w',
        payload: serviceRequest.payload,
      });
      expect(service.state.inputs.runUserWorkflow).toEqual({
        query: { action: 'go', workflow: 'w' },
        body: serviceRequest,
      });
      await expectApiError(client.pals.getPal({ id: 'missing' }), 404, 'NOT_FOUND');

      expect(exchanges.map((e) => e.path.slice(prefix.length).split('/')[1])).toEqual([
        'svc',
        'svc',
        'svc',
        'svc',
        'u',
        'svc',
      ]);
      expect(exchanges.every((e) => e.path.startsWith(`${prefix}/`))).toBe(true);
      for (const e of exchanges) {
        const path = e.path.slice(prefix.length);
        const op = clientOperations.find(
          (o) => o.id === operationOf(e.method, path, { service: 'svc', user: 'u' }),
        );
        expect(op, path).toBeDefined();
        expect(e.responseType).toMatch(
          format === 'xml' ? /^application\/xml/ : /^application\/json/,
        );
        if (format === 'xml') validator.assertValid(e.responseBody);
        if (op?.bodyRoot)
          expect(e.requestType).toBe(format === 'xml' ? 'application/xml' : 'application/json');
      }
    },
  );
});
