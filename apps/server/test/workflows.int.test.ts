// The workflow operations (C2, C5, C7, T6, T9, U1) over real HTTP with real pal folders
// (test/fixtures/workflow-pals), through the generated client in JSON and XML (every XML answer
// validated against the XSDs by the harness): docs/workflows.md's dispatch table, input, output and
// its defaults, failures and their types, all-or-nothing effects, limits, the sandbox's walls, U1's
// paging, and tenant isolation.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PalClient, WireFormat } from '@pal-workflow/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { runLocally } from '../src/workflows/local-run.js';
import type { ServiceRequest } from '@pal-workflow/types';
import { apiError, rejection, startHarness, type Harness } from './harness.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const PALS = ['wf-console', 'wf-tx', 'wf-user', 'wf-empty'];

const TIMEOUT_MS = 4000;
const RAN_TOO_LONG = new RegExp(`longer than ${TIMEOUT_MS} ms`);

let h: Harness;
let approver: string;
beforeAll(async () => {
  h = await startHarness({
    smtp: true,
    env: { WORKFLOW_TIMEOUT_MS: String(TIMEOUT_MS), WORKFLOW_WORKERS: '2' },
  });
  for (const id of PALS) await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, id));
  approver = await createSso(h.domain, h.a.enterpriseId, {
    firstName: 'Ada',
    lastName: 'Approver',
    email: 'ada.approver@example.test',
  });
});
afterAll(() => h?.close());

const post = (values: Record<string, string>) => ({
  postData: Object.entries(values).map(([name, value]) => ({ name, value })),
});
// A memory bomb takes some 2.5 s to reach its limit here, and on a loaded machine more than the
// timeout of the runs above (seen at 1 s, 2.5 s and 4 s, each ending as WORKFLOW_TIMEOUT): its
// runs get a server of their own whose timeout it never meets.
describe('memory bombs', () => {
  let m: Harness;
  beforeAll(async () => {
    m = await startHarness({ env: { WORKFLOW_TIMEOUT_MS: '60000', WORKFLOW_WORKERS: '2' } });
    await deployPal(m.domain, m.a.enterpriseId, join(FIXTURES, 'wf-console'));
  });
  afterAll(() => m?.close());

  it.each([
    ['json', 'memory'],
    ['xml', 'typed-memory'],
    ['json', 'string-memory'],
    ['xml', 'memory'],
    ['json', 'typed-memory'],
    ['xml', 'string-memory'],
  ] as const)(
    'C7 in %s, %s: 200 with success=false and a WORKFLOW_MEMORY message',
    async (format, mode) => {
      const result = await m.a[format].console.runConsoleWorkflow({
        palId: 'wf-console',
        consoleContent: post({ mode }),
      });
      expect(result.success).toBe(false);
      expect(result.messages).toEqual([
        { type: 'WORKFLOW_MEMORY', message: expect.stringMatching(/more than 64 MB/) },
      ]);
    },
    90_000,
  );
});

describe.each(['json', 'xml'] as const)(
  'through the generated client in %s',
  (format: WireFormat) => {
    const a = (): PalClient => h.a[format];
    const c7 = (values: Record<string, string>) =>
      a().console.runConsoleWorkflow({ palId: 'wf-console', consoleContent: post(values) });

    it('C7 runs console.runWorkflow with the body, values and palId, and fills success and palId', async () => {
      const result = await c7({ name: 'Grace' });
      expect(result).toEqual({
        success: true,
        palId: 'wf-console',
        messages: [{ message: 'Hello, Grace', type: 'INFO' }],
        data: [{ name: 'palId', value: 'wf-console' }],
      });
    });

    it('C7: pal.call runs another module of the pal inside the run', async () => {
      const result = await c7({ mode: 'call', name: 'x', name2: 'y' });
      expect(JSON.parse(result.messages![0]!.message)).toEqual({
        values: { mode: 'call', name: 'x', name2: 'y' },
        palId: 'wf-console',
        action: 'runWorkflow',
      });
    });

    it('C7: the last of repeated postData names wins in values', async () => {
      const result = await a().console.runConsoleWorkflow({
        palId: 'wf-console',
        consoleContent: {
          postData: [
            { name: 'name', value: 'first' },
            { name: 'name', value: 'last' },
          ],
        },
      });
      expect(result.messages?.[0]?.message).toBe('Hello, last');
    });

    it.each([
      ['throw', 'WORKFLOW_ERROR', /Error: the approver is missing/],
      ['throw-value', 'WORKFLOW_ERROR', /42/],
      ['loop', 'WORKFLOW_TIMEOUT', RAN_TOO_LONG],
      ['async-loop', 'WORKFLOW_TIMEOUT', RAN_TOO_LONG],
      ['promise-loop', 'WORKFLOW_TIMEOUT', RAN_TOO_LONG],
      ['recursion', 'WORKFLOW_ERROR', /stack overflow/],
      ['cyclic', 'WORKFLOW_ERROR', /cannot be written as JSON/],
      ['bigint', 'WORKFLOW_ERROR', /cannot be written as JSON/],
      ['never', 'WORKFLOW_ERROR', /never settles/],
      ['bad-type', 'WORKFLOW_ERROR', /not a ConsoleResult: success: /],
      ['bad-member', 'WORKFLOW_ERROR', /messages\[0\]/],
      ['not-object', 'WORKFLOW_ERROR', /must return an object/],
      ['import-fs', 'WORKFLOW_ERROR', /no module "fs"/],
      ['unknown-call', 'WORKFLOW_ERROR', /pal.call: module "nope" has no export "x"/],
    ])('C7 %s: 200 with success=false and a %s message', async (mode, type, message) => {
      const result = await c7({ mode });
      expect(result.success).toBe(false);
      expect(result.palId).toBe('wf-console');
      expect(result.messages).toHaveLength(1);
      expect(result.messages![0]!.type).toBe(type);
      expect(result.messages![0]!.message).toMatch(message);
    });

    it('C7: the sandbox has no process, require, fetch, timers or host modules, and constructor chains stay inside', async () => {
      const result = await c7({ mode: 'escape' });
      expect(result.messages!.map((m) => m.message)).toEqual([
        'undefined,undefined,undefined,undefined,undefined,undefined',
        'undefinedundefined',
        'true',
        '0',
      ]);
    });

    it('C7: polluting prototypes reaches neither the host nor the next run', async () => {
      const polluted = await c7({ mode: 'pollute' });
      expect(polluted.messages?.[0]?.message).toBe('true'); // pal is frozen
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((await c7({ name: 'after' })).messages?.[0]?.message).toBe('Hello, after');
    });

    it('C7 of a pal without a console module: success=false, NO_WORKFLOW', async () => {
      const result = await a().console.runConsoleWorkflow({
        palId: 'wf-empty',
        consoleContent: {},
      });
      expect(result).toMatchObject({ success: false, palId: 'wf-empty' });
      expect(result.messages?.[0]?.type).toBe('NO_WORKFLOW');
    });

    it('C2 runs console.run: an object of name → string becomes a NameValue list', async () => {
      const list = await a().console.runConsolePal({
        palId: 'wf-console',
        consoleContent: post({ name: 'Lin' }),
      });
      expect(list).toEqual([
        { name: 'greeting', value: 'Hello, Lin' },
        { name: 'count', value: '1' },
      ]);
    });

    it('C2: a name "__proto__" in the returned object is a name like any other', async () => {
      const list = await a().console.runConsolePal({
        palId: 'wf-console',
        consoleContent: post({ mode: 'reserved-name' }),
      });
      expect(list).toEqual([
        { name: '__proto__', value: 'x' },
        { name: 'b', value: 'y' },
      ]);
    });

    it('C2: a failed run answers 422 with the failure type', async () => {
      const e = await apiError(
        a().console.runConsolePal({ palId: 'wf-console', consoleContent: post({ mode: 'loop' }) }),
        422,
        'WORKFLOW_TIMEOUT',
      );
      expect(e.message).toMatch(RAN_TOO_LONG);
      await apiError(
        a().console.runConsolePal({ palId: 'wf-empty', consoleContent: {} }),
        422,
        'NO_WORKFLOW',
      );
    });

    it('C2, C7 need a console pal of the enterprise: 404 otherwise', async () => {
      await apiError(
        a().console.runConsolePal({ palId: 'wf-tx', consoleContent: {} }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        a().console.runConsoleWorkflow({ palId: 'nope', consoleContent: {} }),
        404,
        'NOT_FOUND',
      );
    });

    it('C5 runs console.executeWorkflow with the body as text', async () => {
      const result = await a().console.executeConsoleWorkflow({
        palId: 'wf-console',
        requestBody: { order: { item: 'thing' } },
      });
      expect(result.success).toBe(true);
      expect(result.palId).toBe('wf-console');
      expect(result.messages?.[0]?.message).toMatch(/^application\/(json|xml) \d+$/);
      expect(result.messages?.[1]?.message).toContain('thing');
    });

    it('T6 runs the transaction module; variables, status, roles and webServiceStatus are kept', async () => {
      const id = await a().transactions.createTransaction({ palId: 'wf-tx' });
      const first = await a().transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: post({ step: 'submit', approver, amount: '12.50' }),
      });
      expect(first).toEqual({
        success: true,
        palId: 'wf-tx',
        transactionId: id,
        recordsProcessed: 1,
        messages: [{ message: 'submitted by run 1' }],
      });
      const info = await a().transactions.getTransaction({ id });
      expect([info.status, info.webServiceStatus]).toEqual(['SUBMITTED', 'SUCCEEDED']);
      const found = await a().transactions.searchTransactions({ sso: approver, palId: 'wf-tx' });
      expect(found.map((t) => t.id)).toContain(id);

      const view = await a().transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: post({ step: 'view' }),
      });
      expect(JSON.parse(view.messages![0]!.message)).toEqual({
        id,
        palId: 'wf-tx',
        status: 'SUBMITTED',
        web: 'RUNNING',
        vars: { count: '2' },
        roles: [{ sso: approver, role: 'approver' }],
      });

      const approved = await a().transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: post({ step: 'approve' }),
      });
      expect(approved.messages?.[0]?.message).toBe('COMPLETED');
      expect((await a().transactions.getTransaction({ id })).status).toBe('APPROVED');
    });

    it('T6: a failed run keeps nothing of what it did, and webServiceStatus says FAILED', async () => {
      const id = await a().transactions.createTransaction({ palId: 'wf-tx' });
      await a().transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: post({}),
      });
      for (const step of ['fail-after-set', 'illegal', 'unknown-sso']) {
        const result = await a().transactions.runTransactionWorkflow({
          transactionId: id,
          transactionContent: post({ step }),
        });
        expect(result, step).toMatchObject({ success: false, transactionId: id, palId: 'wf-tx' });
        expect(result.messages?.[0]?.type).toBe('WORKFLOW_ERROR');
        const info = await a().transactions.getTransaction({ id });
        expect([info.status, info.webServiceStatus]).toEqual(['NEW', 'FAILED']);
      }
      const view = await a().transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: post({ step: 'view' }),
      });
      // count went 1 (first run) → 2 (this run): the three failed runs kept no variable.
      expect(JSON.parse(view.messages![0]!.message).vars).toEqual({ count: '2' });
    });

    it('T6: a variable named __proto__ is kept, read back by the next run, and listed by pal.vars.all', async () => {
      const id = await a().transactions.createTransaction({ palId: 'wf-tx' });
      const set = await a().transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: post({ step: 'proto' }),
      });
      expect(set.messages?.[0]?.message).toBe('kept');
      const view = await a().transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: post({ step: 'view' }),
      });
      const vars = JSON.parse(view.messages![0]!.message).vars as Record<string, string>;
      expect(Object.entries(vars).sort()).toEqual([
        ['__proto__', 'kept'],
        ['count', '2'],
      ]);
    });

    it('T9 runs transaction.run and answers its NameValue list', async () => {
      const id = await a().transactions.createTransaction({ palId: 'wf-tx' });
      expect(
        await a().transactions.runTransaction({ transactionId: id, transactionContent: {} }),
      ).toEqual([
        { name: 'transactionId', value: id },
        { name: 'status', value: 'NEW' },
      ]);
      expect((await a().transactions.getTransaction({ id })).webServiceStatus).toBe('SUCCEEDED');
    });

    it('T6, T9 of another enterprise or an unknown transaction: 404', async () => {
      const id = await a().transactions.createTransaction({ palId: 'wf-tx' });
      const b = h.b[format];
      await apiError(
        b.transactions.runTransactionWorkflow({ transactionId: id, transactionContent: {} }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        b.transactions.runTransaction({ transactionId: id, transactionContent: {} }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        b.console.runConsoleWorkflow({ palId: 'wf-console', consoleContent: {} }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        b.console.runConsolePal({ palId: 'wf-console', consoleContent: {} }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        b.console.executeConsoleWorkflow({ palId: 'wf-console', requestBody: { a: { b: 'c' } } }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        b.user.runUserWorkflow({
          workflow: 'wf-user',
          action: 'list',
          serviceRequest: serviceRequest(),
        }),
        404,
        'NOT_FOUND',
      );
      expect((await a().transactions.getTransaction({ id })).webServiceStatus).toBe('IDLE');
    });

    it('U1 runs user.<action> of the pal named by workflow, with ServiceResponse defaults', async () => {
      const response = await a().user.runUserWorkflow({
        workflow: 'wf-user',
        action: 'nothing',
        serviceRequest: serviceRequest(),
      });
      expect(response).toEqual({ success: true, currentPage: 1, totalPages: 1, listBindings: {} });
    });

    it('U1 paging: pages of pageSize rows of every list, totalPages from the longest', async () => {
      const page = (paging: Partial<ReturnType<typeof serviceRequest>>, rows = '7') =>
        a().user.runUserWorkflow({
          workflow: 'wf-user',
          action: 'list',
          serviceRequest: serviceRequest({
            ...paging,
            payload: { data: { rows }, dataMaps: {}, dataLists: {} },
          }),
        });
      const rowsOf = (r: Awaited<ReturnType<typeof page>>, list = 'people') =>
        r.payload!.dataLists[list]!.rows ?? [];
      const first = await page({ paging: true, pageSize: 3, page: 1 });
      expect([first.currentPage, first.totalPages, rowsOf(first).map((r) => r[0])]).toEqual([
        1,
        3,
        ['1', '2', '3'],
      ]);
      expect(rowsOf(first, 'short')).toHaveLength(2);
      const last = await page({ paging: true, pageSize: 3, page: 3 });
      expect([last.currentPage, last.totalPages, rowsOf(last).map((r) => r[0])]).toEqual([
        3,
        3,
        ['7'],
      ]);
      expect(rowsOf(last, 'short')).toEqual([]);
      const past = await page({ paging: true, pageSize: 3, page: 9 });
      expect([past.currentPage, past.totalPages, rowsOf(past)]).toEqual([9, 3, []]);
      const single = await page({ paging: true, pageSize: 1, page: 2 });
      expect([single.totalPages, rowsOf(single).map((r) => r[0])]).toEqual([7, ['2']]);
      const limited = await page({ paging: true, pageSize: 5, page: 1, listLimit: 2 });
      expect([limited.totalPages, rowsOf(limited).map((r) => r[0])]).toEqual([1, ['1', '2']]);
      const unpaged = await page({ paging: false, listLimit: 4 });
      expect([unpaged.currentPage, unpaged.totalPages, rowsOf(unpaged).length]).toEqual([1, 1, 4]);
      const empty = await page({ paging: true, pageSize: 3 }, '0');
      expect([empty.currentPage, empty.totalPages]).toEqual([1, 1]);
      // 0 is the default (a client that fills every member sends it); a negative number is a 400.
      const zero = await page({ paging: true, pageSize: 0, page: 0 });
      expect([zero.currentPage, zero.totalPages, rowsOf(zero).length]).toEqual([1, 1, 7]);
      for (const wrong of [{ page: -1 }, { pageSize: -5 }, { listLimit: -1 }, { sizeLimit: -2 }]) {
        await expect(page({ paging: true, ...wrong }), JSON.stringify(wrong)).rejects.toMatchObject(
          { status: 400, message: expect.stringContaining('must be 0 or more') },
        );
      }
    });

    it('U1: sizeLimit fails the run with an errorMessage; debug=true adds DebugInfo on success', async () => {
      const big = await a().user.runUserWorkflow({
        workflow: 'wf-user',
        action: 'list',
        serviceRequest: serviceRequest({
          sizeLimit: 200,
          payload: { data: { rows: '50' }, dataMaps: {}, dataLists: {} },
        }),
      });
      expect(big.success).toBe(false);
      expect(big.errorMessage).toMatch(/more than the request's sizeLimit of 200/);
      const debug = await a().user.runUserWorkflow({
        workflow: 'wf-user',
        action: 'nothing',
        serviceRequest: serviceRequest({ debug: true }),
      });
      expect(debug.debugInfo).toEqual({ workflow: 'wf-user', action: 'nothing', line: 0 });
    });

    it('U1: a thrown error gives errorMessage and DebugInfo with the line and call stack in the module', async () => {
      const failed = await a().user.runUserWorkflow({
        workflow: 'wf-user',
        action: 'fail',
        serviceRequest: serviceRequest(),
      });
      expect(failed.success).toBe(false);
      expect(failed.errorMessage).toBe('Error: no such person');
      expect(failed.debugInfo).toEqual({
        workflow: 'wf-user',
        action: 'fail',
        line: 17,
        callStack: ['helper (user:17)', 'fail (user:19)'],
      });
      const missing = await a().user.runUserWorkflow({
        workflow: 'wf-user',
        action: 'nope',
        serviceRequest: serviceRequest(),
      });
      expect(missing).toMatchObject({
        success: false,
        debugInfo: { workflow: 'wf-user', action: 'nope', line: 0 },
      });
      expect(missing.errorMessage).toMatch(/no export "nope"/);
    });

    // The request refuses the map key "__proto__" (400, in both formats); zod's records dropped it
    // from the answer without a word, so `{"__proto__":"x","kept":"y"}` answered `{"kept":"y"}`.
    it.each(['data', 'dataMaps', 'entries', 'listBindings'])(
      'U1: a map of the answer with the key __proto__ (in %s) fails the run, naming where',
      async (at) => {
        const response = await a().user.runUserWorkflow({
          workflow: 'wf-user',
          action: 'reserved',
          serviceRequest: serviceRequest({
            payload: { data: { at }, dataMaps: {}, dataLists: {} },
          }),
        });
        const where = {
          data: 'payload.data',
          dataMaps: 'payload.dataMaps',
          entries: 'payload.dataMaps.d.entries',
          listBindings: 'listBindings',
        }[at];
        expect(response).toMatchObject({ success: false, debugInfo: { action: 'reserved' } });
        expect(response.errorMessage).toBe(
          `the workflow returned a value that is not a ServiceResponse: ${where}: the key "__proto__" is reserved`,
        );
      },
    );

    // JSON carried the key as it was, and XML wrote it with U+FFFD in its place.
    it('U1: a map key of the answer with a character XML cannot carry fails the run, naming it', async () => {
      const response = await a().user.runUserWorkflow({
        workflow: 'wf-user',
        action: 'reserved',
        serviceRequest: serviceRequest({
          payload: { data: { at: 'control-key' }, dataMaps: {}, dataLists: {} },
        }),
      });
      expect(response.success).toBe(false);
      expect(response.errorMessage).toMatch(
        /^the workflow returned a value that is not a ServiceResponse: payload\.data\.a.: the key contains a character that XML cannot carry$/,
      );
    });

    it('U1: __proto__ in an object literal is no key: the answer holds the other keys', async () => {
      const response = await a().user.runUserWorkflow({
        workflow: 'wf-user',
        action: 'reserved',
        serviceRequest: serviceRequest(),
      });
      expect(response.success).toBe(true);
      expect(response.payload?.data).toEqual({ kept: 'y' });
    });
  },
);

function serviceRequest(over: Record<string, unknown> = {}) {
  return {
    sizeLimit: 0,
    listLimit: 0,
    paging: false,
    pageSize: 50,
    page: 1,
    debug: false,
    ...over,
  } as ServiceRequest;
}

describe('runs and their surroundings', () => {
  it('50 runs at once on one transaction lose no variable update', async () => {
    const id = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        h.a.json.transactions.runTransactionWorkflow({ transactionId: id, transactionContent: {} }),
      ),
    );
    expect(results.every((r) => r.success)).toBe(true);
    const counts = results.map((r) => Number(r.messages![0]!.message.replace('count=', '')));
    expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('50 console runs at once on one pal lose no variable update (conflicts are repeated)', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        h.a.json.console.runConsoleWorkflow({
          palId: 'wf-console',
          consoleContent: post({ mode: 'vars' }),
        }),
      ),
    );
    const succeeded = results.filter((r) => r.success);
    const counts = new Set(succeeded.map((r) => r.messages![0]!.message));
    // Every success saw a different count: none overwrote another's.
    expect(counts.size).toBe(succeeded.length);
    expect(succeeded.length).toBeGreaterThan(0);
  });

  it(
    'P2 keeps answering on another connection while runs loop until their limit',
    async () => {
      const loops = Array.from({ length: 4 }, () =>
        h.a.json.console.runConsoleWorkflow({
          palId: 'wf-console',
          consoleContent: post({ mode: 'loop' }),
        }),
      );
      let loopsDone = false;
      const allLoops = Promise.all(loops).then((r) => {
        loopsDone = true;
        return r;
      });
      const started = performance.now();
      const answer = await h.http('/services/rest/pals/wf-console', { accept: 'application/json' });
      const p2Ms = performance.now() - started;
      expect(answer.status).toBe(200);
      expect(loopsDone).toBe(false);
      const results = await allLoops;
      expect(results.every((r) => r.messages?.[0]?.type === 'WORKFLOW_TIMEOUT')).toBe(true);
      expect(p2Ms).toBeGreaterThanOrEqual(0);
      // One run of a tenant at a time here: four runs out their limit one after the other.
    },
    8 * TIMEOUT_MS,
  );

  it("pal.mail.send mails the recipient a link that T3 resolves, in the sender's enterprise only", async () => {
    const id = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const before = h.mails.length;
    await h.a.json.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ step: 'submit', approver, amount: '99' }),
    });
    expect(h.mails.length).toBe(before + 1);
    const { envelope, mail } = h.mails.at(-1)!;
    expect(envelope.to).toEqual(['ada.approver@example.test']);
    expect(mail.subject).toBe('Please approve');
    expect(mail.text).toContain('An expense of 99 waits for you.');
    const link = new URL(
      /http:\/\/pal\.example\.test:8443\/services\/mail\?encryptedToken=[A-Za-z0-9_-]+&encryptedAction=[A-Za-z0-9_-]+/.exec(
        mail.text!,
      )![0],
    );
    const encryptedToken = link.searchParams.get('encryptedToken')!;
    const encryptedAction = link.searchParams.get('encryptedAction')!;
    for (const client of [h.a.json, h.a.xml]) {
      const info = await client.transactions.getTransaction({ id });
      expect(
        await client.transactions.getTransactionFromEmail({ encryptedToken, encryptedAction }),
      ).toEqual({
        success: true,
        transactionId: id,
        palId: 'wf-tx',
        action: 'approve',
        emailType: 'workflow',
        transactionInfoList: [info],
        recordsProcessed: 0,
      });
    }
    // Another enterprise's client: no such transaction. A tampered value: 400.
    await apiError(
      h.b.json.transactions.getTransactionFromEmail({ encryptedToken, encryptedAction }),
      404,
      'NOT_FOUND',
    );
    const tampered = `${encryptedAction.slice(0, -2)}${encryptedAction.endsWith('AA') ? 'BB' : 'AA'}`;
    await apiError(
      h.a.json.transactions.getTransactionFromEmail({ encryptedToken, encryptedAction: tampered }),
      400,
      'INVALID_ARGUMENT',
    );
  });

  /** A folder with wf-tx's manifest and documents, and `source` as its transaction module. */
  const txPalWith = (name: string, source: string): string => {
    const folder = join(h.dataDir, name);
    mkdirSync(join(folder, 'workflows'), { recursive: true });
    cpSync(join(FIXTURES, 'wf-tx', 'pal.json'), join(folder, 'pal.json'));
    cpSync(join(FIXTURES, 'wf-tx', 'documents'), join(folder, 'documents'), { recursive: true });
    writeFileSync(join(folder, 'workflows', 'transaction.js'), source);
    return folder;
  };

  it('a pal whose module does not compile is refused at deploy time with FILE:LINE: message', async () => {
    const folder = txPalWith('broken-pal', 'export function runWorkflow() {\n  return 1 +;\n}\n');
    const error = await rejection(deployPal(h.domain, h.a.enterpriseId, folder));
    // The folder as it was given, as the manifest's errors name `FOLDER/pal.json`.
    expect(String((error as Error).message)).toBe(
      `${folder}/workflows/transaction.js:2: SyntaxError: unexpected token in expression: ';'`,
    );
  });

  it('a module nested deeper than the compiler can follow is refused, and the next deploy compiles', async () => {
    const folder = txPalWith(
      'deep-pal',
      `export const x = ${'('.repeat(100_000)}1${')'.repeat(100_000)};\n`,
    );
    for (let i = 0; i < 3; i++) {
      const error = await rejection(deployPal(h.domain, h.a.enterpriseId, folder));
      expect((error as Error).name).toBe('WorkflowCheckError');
      // Deeper than the parser's own stack check notices, on the thread that deploys: the host's
      // stack overflows inside the compiler module, which is then loaded anew.
      expect(String((error as Error).message)).toBe(
        `${folder}/workflows/transaction.js: the module is nested too deeply to compile`,
      );
    }
    await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, 'wf-tx'));
  });

  it('a new version of a pal runs its new code on workers that kept the old one compiled', async () => {
    const folder = join(h.dataDir, 'versioned-pal');
    mkdirSync(join(folder, 'workflows'), { recursive: true });
    writeFileSync(
      join(folder, 'pal.json'),
      JSON.stringify({
        id: 'versioned-pal',
        modes: { console: true },
        workflows: { console: 'workflows/console.js', words: 'workflows/words.js' },
      }),
    );
    const deploy = async (word: string) => {
      writeFileSync(join(folder, 'workflows', 'words.js'), `export const word = '${word}';\n`);
      writeFileSync(
        join(folder, 'workflows', 'console.js'),
        "import { word } from './words.js';\nexport function runWorkflow() { return { messages: [{ message: word }] }; }\n",
      );
      await deployPal(h.domain, h.a.enterpriseId, folder);
    };
    // Twice as many runs at once as there are workers, so that most workers run the version.
    const runs = () =>
      Promise.all(
        Array.from({ length: 2 * h.config.workflowWorkers }, () =>
          h.a.json.console.runConsoleWorkflow({ palId: 'versioned-pal', consoleContent: {} }),
        ),
      ).then((results) => new Set(results.map((r) => r.messages![0]!.message)));
    await deploy('first');
    expect(await runs()).toEqual(new Set(['first']));
    expect(await runs()).toEqual(new Set(['first']));
    // Only the imported file changes: the version's key must change with every file.
    await deploy('second');
    expect(await runs()).toEqual(new Set(['second']));
  });

  it('U1 without workflow or action: 400 naming the parameter', async () => {
    const answer = await h.http('/user/runWorkflow?action=list', {
      accept: 'application/json',
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(serviceRequest()),
    });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('workflow: required');
  });

  // docs/workflows.md: "what works here works there", and what the server refuses `pal run`
  // refuses, with the same answer. (Before: {"postData":"x"} crashed `pal run` with a TypeError,
  // and [1,2] or a number as a name ran.)
  it.each([
    ['C7', '{"postData":"x"}', 'console/wf-console/runWorkflow', 'console', 'runWorkflow'],
    ['C7', '[1,2]', 'console/wf-console/runWorkflow', 'console', 'runWorkflow'],
    ['C2', '{"postData":[{"name":1}]}', 'console/wf-console/run', 'console', 'run'],
    ['C2', '{"postData":[],"postData":[]}', 'console/wf-console/run', 'console', 'run'],
    ['C7', '{"values":{}}', 'console/wf-console/runWorkflow', 'console', 'runWorkflow'],
    ['C7', '{"postData":', 'console/wf-console/runWorkflow', 'console', 'runWorkflow'],
  ])(
    "%s with the body %s: pal run answers the server's 400",
    async (_, body, path, module, name) => {
      const answer = await h.http(`/services/rest/${path}`, {
        accept: 'application/json',
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(answer.status).toBe(400);
      const local = await runLocally(join(FIXTURES, 'wf-console'), {
        module,
        exportName: name,
        input: body,
        timeoutMs: 1000,
        memoryMb: 64,
      });
      expect(local).toEqual({
        operation: expect.stringMatching(/^C[27] /),
        status: 400,
        response: JSON.parse(answer.text),
        outcome: 'failed',
        logs: [],
      });
    },
  );

  it('pal run answers the 400 the server answers U1 for a negative page, and C5 for a document that is not JSON', async () => {
    const request = JSON.stringify({ ...serviceRequest(), page: -1 });
    const u1 = await h.http('/user/runWorkflow?workflow=wf-user&action=list', {
      accept: 'application/json',
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: request,
    });
    const localU1 = await runLocally(join(FIXTURES, 'wf-user'), {
      module: 'user',
      exportName: 'list',
      input: request,
      timeoutMs: 1000,
      memoryMb: 64,
    });
    expect(u1.status).toBe(400);
    expect([localU1.status, localU1.response]).toEqual([400, JSON.parse(u1.text)]);
    const c5 = await h.http('/services/rest/console/wf-console/executeWorkflow', {
      accept: 'application/json',
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '[1]',
    });
    const localC5 = await runLocally(join(FIXTURES, 'wf-console'), {
      module: 'console',
      exportName: 'executeWorkflow',
      input: JSON.stringify({ text: '[1]', contentType: 'application/json' }),
      timeoutMs: 1000,
      memoryMb: 64,
    });
    expect(c5.status).toBe(400);
    expect([localC5.status, localC5.response]).toEqual([400, JSON.parse(c5.text)]);
  });

  it('every status answered is one the bundled OpenAPI declares for its operation', () => {
    expect(h.undeclaredStatuses()).toEqual([]);
  });

  it('the server is healthy after every limit was broken', async () => {
    expect((await h.http('/healthz')).status).toBe(200);
    const result = await h.a.json.console.runConsoleWorkflow({
      palId: 'wf-console',
      consoleContent: post({ name: 'still here' }),
    });
    expect(result.messages?.[0]?.message).toBe('Hello, still here');
  });
});
