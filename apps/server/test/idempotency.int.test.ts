// Idempotency-Key (IETF draft-ietf-httpapi-idempotency-key-header) on T1 and the workflow runs
// C2, C5, C7, T6, T9, U1, over real HTTP: a repeat gets the first answer byte for byte and the
// work is not done again (counted: transactions in the database, runs by the workflow's own
// counter); 50 concurrent requests with one key do the work once; the key with another request is
// 422; a bad key 400; a first request still being served makes the repeat wait, then 409; a key
// whose request died is taken over after its lease. The generated client sends the header.
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { apiError, expectError, form, startHarness, type Answer, type Harness } from './harness.js';

/** An errorResult in the format the answer came in. */
function refusal(answer: Answer, status: number, code: string): string[] {
  return expectError(answer, status, code, answer.type.startsWith(JSON_TYPE) ? 'json' : 'xml');
}

const FIXTURE = join(import.meta.dirname, 'fixtures', 'workflow-pals', 'idem-counter');
const PAL = 'idem-counter';
const JSON_TYPE = 'application/json';

let h: Harness;
let keys = 0;
/** A key no test used before. */
const newKey = () => `key-${process.pid}-${++keys}-${Math.random().toString(36).slice(2)}`;

beforeAll(async () => {
  // The wait for a first request's answer is WORKFLOW_TIMEOUT_MS + 2 s: 5 s here, so that 50
  // requests at once all get the first answer also on a busy machine (the 409 test waits it out).
  h = await startHarness({ env: { WORKFLOW_TIMEOUT_MS: '3000' } });
  await deployPal(h.domain, h.a.enterpriseId, FIXTURE);
});
afterAll(() => h?.close());

async function transactionCount(): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*) as n from transactions where pal_id = ${PAL}`.execute(h.domain.db);
  return Number(rows[0]!.n);
}

async function newTransaction(): Promise<string> {
  return h.a.json.transactions.createTransaction({ palId: PAL });
}

interface Call {
  path: string;
  body?: string;
  contentType?: string;
  accept?: string;
}

function send(call: Call, key?: string, auth = h.a): Promise<Answer> {
  return h.http(call.path, {
    method: 'POST',
    auth,
    accept: call.accept ?? JSON_TYPE,
    headers: {
      ...(call.contentType ? { 'Content-Type': call.contentType } : {}),
      ...(key === undefined ? {} : { 'Idempotency-Key': key }),
    },
    body: call.body,
  });
}

const content = (note: string) => JSON.stringify({ postData: [{ name: 'note', value: note }] });

/** The seven operations, each as a call whose answer shows the workflow's run count. */
async function operationsUnderTest(): Promise<Record<string, Call>> {
  const tx = await newTransaction();
  return {
    'T1 createTransaction': {
      path: '/services/rest/transactions',
      body: form({ palId: PAL }).toString(),
      contentType: 'application/x-www-form-urlencoded',
    },
    'C2 runConsolePal': {
      path: `/services/rest/console/${PAL}/run`,
      body: content('c2'),
      contentType: JSON_TYPE,
    },
    'C5 executeConsoleWorkflow': {
      path: `/services/rest/console/${PAL}/executeWorkflow`,
      body: '{"any":"document"}',
      contentType: JSON_TYPE,
    },
    'C7 runConsoleWorkflow': {
      path: `/services/rest/console/${PAL}/runWorkflow`,
      body: content('c7'),
      contentType: JSON_TYPE,
    },
    'T6 runTransactionWorkflow': {
      path: `/services/rest/transactions/${tx}/runWorkflow`,
      body: content('t6'),
      contentType: JSON_TYPE,
    },
    'T9 runTransaction': {
      path: `/services/rest/transactions/${tx}/run`,
      body: content('t9'),
      contentType: JSON_TYPE,
    },
    'U1 runUserWorkflow': {
      path: `/user/runWorkflow?workflow=${PAL}&action=tally`,
    },
  };
}

describe('Idempotency-Key', () => {
  it('T1: the same key twice makes one transaction; the answers are byte-identical', async () => {
    const call = (await operationsUnderTest())['T1 createTransaction']!;
    const before = await transactionCount();
    const key = newKey();
    for (const accept of ['application/xml', JSON_TYPE, 'text/plain']) {
      const k = `${key}-${accept}`;
      const first = await send({ ...call, accept }, k);
      const second = await send({ ...call, accept }, k);
      expect(first.status, first.text).toBe(200);
      expect([second.status, second.type, second.text]).toEqual([
        first.status,
        first.type,
        first.text,
      ]);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    }
    expect(await transactionCount()).toBe(before + 3);
  });

  it('the generated client sends the key: the repeat answers the same transaction id', async () => {
    const before = await transactionCount();
    const idempotencyKey = newKey();
    const first = await h.a.json.transactions.createTransaction({ palId: PAL, idempotencyKey });
    const again = await h.a.json.transactions.createTransaction({ palId: PAL, idempotencyKey });
    expect(again).toBe(first);
    // The same key asking for XML is another request (the format is part of it).
    await apiError(
      h.a.xml.transactions.createTransaction({ palId: PAL, idempotencyKey }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(await transactionCount()).toBe(before + 1);
    const run = {
      transactionId: first,
      transactionContent: { postData: [{ name: 'note', value: 'client' }] },
    };
    const run1 = await h.a.json.transactions.runTransactionWorkflow({
      ...run,
      idempotencyKey: `${idempotencyKey}-t6`,
    });
    const repeat = await h.a.json.transactions.runTransactionWorkflow({
      ...run,
      idempotencyKey: `${idempotencyKey}-t6`,
    });
    const again6 = await h.a.json.transactions.runTransactionWorkflow({
      ...run,
      idempotencyKey: `${idempotencyKey}-t6-again`,
    });
    // The repeat is the first run's answer; a new key is a new request: run 2.
    expect(run1.messages?.[0]?.message).toBe('run 1 client');
    expect(repeat).toEqual(run1);
    expect(again6.messages?.[0]?.message).toBe('run 2 client');
  });

  it('each of the seven operations answers a repeat from its first answer, without the work', async () => {
    for (const [name, call] of Object.entries(await operationsUnderTest())) {
      const key = newKey();
      const first = await send(call, key);
      const repeat = await send(call, key);
      expect(first.status, `${name}: ${first.text}`).toBe(200);
      expect([repeat.status, repeat.type, repeat.text], name).toEqual([
        first.status,
        first.type,
        first.text,
      ]);
      expect(repeat.headers.get('idempotent-replayed'), name).toBe('true');
      // Without a key, the next request does the work: its answer differs (a new transaction
      // id, or the next run count), which the repeat's did not.
      const next = await send(call);
      expect(next.status, name).toBe(200);
      expect(next.text, name).not.toBe(first.text);
    }
  });

  it('50 concurrent requests with one key do the work once (T1 and T6)', async () => {
    const calls = await operationsUnderTest();
    const before = await transactionCount();
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => send(calls['T1 createTransaction']!, key)),
    );
    expect(await transactionCount()).toBe(before + 1);
    expect(new Set(answers.map((a) => `${a.status} ${a.type} ${a.text}`)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);

    const t6 = calls['T6 runTransactionWorkflow']!;
    const key6 = newKey();
    const runs = await Promise.all(Array.from({ length: 50 }, () => send(t6, key6)));
    expect(new Set(runs.map((a) => `${a.status} ${a.text}`)).size).toBe(1);
    expect(JSON.parse(runs[0]!.text).messages[0].message).toBe('run 1 t6');
    // The transaction's run counter says one run, and so does the next run's count.
    const next = await send(t6);
    expect(JSON.parse(next.text).messages[0].message).toBe('run 2 t6');
  });

  it('the key with another request answers 422 IDEMPOTENCY_KEY_REUSED and does nothing', async () => {
    const calls = await operationsUnderTest();
    const c7 = calls['C7 runConsoleWorkflow']!;
    const key = newKey();
    const first = await send(c7, key);
    expect(first.status).toBe(200);
    const others: Call[] = [
      { ...c7, body: content('another note') }, // another body
      { ...c7, accept: 'application/xml' }, // another format
      { ...calls['C2 runConsolePal']!, body: c7.body }, // another path
      { ...c7, path: `${c7.path}?x=1` }, // another query
      {
        ...c7,
        body: '<consoleContent xmlns="urn:pal-workflow:pal"/>',
        contentType: 'application/xml',
      },
    ];
    for (const other of others) {
      const refused = await send(other, key);
      refusal(refused, 422, 'IDEMPOTENCY_KEY_REUSED');
    }
    // Nothing ran: the next run's count is the first's plus one.
    const count = (text: string) => Number(/run (\d+)/.exec(text)![1]);
    expect(count((await send(c7)).text)).toBe(count(first.text) + 1);
    // And the first request still gets its answer.
    expect((await send(c7, key)).text).toBe(first.text);
  });

  it('keys belong to their client: another client with the same key does its own work', async () => {
    const key = newKey();
    const a = await send((await operationsUnderTest())['T1 createTransaction']!, key, h.a);
    const b = await send(
      {
        path: '/services/rest/transactions',
        body: form({ palId: 'expense-approval' }).toString(),
        contentType: 'application/x-www-form-urlencoded',
      },
      key,
      h.b,
    );
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.text).not.toBe(a.text);
  });

  it('keeps the first answer when it is an error: the same request answers it again', async () => {
    const call: Call = {
      path: '/services/rest/transactions',
      body: form({ palId: 'not-deployed-yet' }).toString(),
      contentType: 'application/x-www-form-urlencoded',
    };
    const key = newKey();
    const first = await send(call, key);
    refusal(first, 404, 'NOT_FOUND');
    const repeat = await send(call, key);
    expect([repeat.status, repeat.text]).toEqual([first.status, first.text]);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a 406 does not use the key up: a retry that accepts a format does the work', async () => {
    const call = (await operationsUnderTest())['T1 createTransaction']!;
    const before = await transactionCount();
    const key = newKey();
    for (const accept of ['image/png', 'image/gif']) {
      const refused = await send({ ...call, accept }, key);
      expect(refused.status).toBe(406);
      expect(refused.headers.get('idempotent-replayed')).toBeNull();
      // Its own Accept, not the first request's.
      expect(refused.text).toContain(accept);
    }
    expect(await transactionCount()).toBe(before);
    const served = await send(call, key);
    expect(served.status, served.text).toBe(200);
    expect(served.headers.get('idempotent-replayed')).toBeNull();
    expect(await transactionCount()).toBe(before + 1);
  });

  // Another node's run of the transaction (on one node runs of a transaction queue up): its 409
  // passes by itself, so the key is not kept with it for 24 hours.
  it('a 409 of a run in progress, with Retry-After, does not use the key up', async () => {
    const tx = await newTransaction();
    const t6: Call = {
      path: `/services/rest/transactions/${tx}/runWorkflow`,
      body: content('busy'),
      contentType: JSON_TYPE,
    };
    const status = (web_service_status: string) =>
      h.domain.db
        .updateTable('transactions')
        .set({ web_service_status, modified_date: new Date().toISOString() })
        .where('id', '=', tx)
        .execute();
    await status('RUNNING');
    const key = newKey();
    const busy = await send(t6, key);
    expect(refusal(busy, 409, 'CONFLICT')).toEqual([
      'the web-service workflow of this transaction is already running',
    ]);
    expect(busy.headers.get('retry-after')).toBe('1');
    await status('SUCCEEDED');
    const done = await send(t6, key);
    expect(done.status, done.text).toBe(200);
    expect(done.headers.get('idempotent-replayed')).toBeNull();
    expect((await send(t6, key)).headers.get('idempotent-replayed')).toBe('true');
  });

  it("the draft's quoted form names the same key as the bare one", async () => {
    const call = (await operationsUnderTest())['T1 createTransaction']!;
    const key = newKey();
    const first = await send(call, key);
    const quoted = await send(call, `"${key}"`);
    expect(quoted.text).toBe(first.text);
    expect(quoted.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a bad key with 400 before doing anything', async () => {
    const call = (await operationsUnderTest())['T1 createTransaction']!;
    const before = await transactionCount();
    for (const bad of [
      '',
      '""',
      'a'.repeat(256),
      'has space',
      'quote"inside',
      'back\\slash',
      'ü',
    ]) {
      const answer = await h
        .http(call.path, {
          method: 'POST',
          accept: JSON_TYPE,
          headers: { 'Content-Type': call.contentType!, 'Idempotency-Key': bad },
          body: call.body,
        })
        .catch(() => undefined); // fetch itself refuses some header values
      if (answer === undefined) continue;
      refusal(answer, 400, 'INVALID_ARGUMENT');
      expect(answer.text).toContain('Idempotency-Key');
    }
    expect(await transactionCount()).toBe(before);
  });

  it('a request without a key is served as always', async () => {
    const call = (await operationsUnderTest())['T1 createTransaction']!;
    const before = await transactionCount();
    const [x, y] = [await send(call), await send(call)];
    expect(x.text).not.toBe(y.text);
    expect(await transactionCount()).toBe(before + 2);
  });

  it('a repeat while the first request is served waits, then answers 409 with Retry-After; a dead claim is taken over after its lease', async () => {
    const call = (await operationsUnderTest())['C7 runConsoleWorkflow']!;
    const key = newKey();
    const first = await send(call, key);
    // As if another node were still serving the first request: its answer not yet stored.
    const unanswer = (lockedUntil: string) =>
      h.domain.db
        .updateTable('idempotency_keys')
        .set({
          status: null,
          content_type: null,
          body: null,
          owner: 'another-node',
          locked_until: lockedUntil,
        })
        .where('idempotency_key', '=', key)
        .execute();
    await unanswer(new Date(Date.now() + 3_600_000).toISOString());
    const started = Date.now();
    const busy = await send(call, key);
    refusal(busy, 409, 'CONFLICT');
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000); // it waited for the answer first
    // The other node died: once its lease is over, the next repeat does the work itself.
    await unanswer(new Date(Date.now() - 1).toISOString());
    const redone = await send(call, key);
    expect(redone.status).toBe(200);
    expect(redone.headers.get('idempotent-replayed')).toBeNull();
    expect(redone.text).not.toBe(first.text); // the next run count
    expect((await send(call, key)).text).toBe(redone.text);
  });

  it('the OpenAPI declares the header, 409 and 422 on the seven operations, and every status seen', async () => {
    const document = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; parameters?: unknown[]; responses: object }>
      >;
      components: { parameters: Record<string, { name: string; in: string }> };
    };
    const declaring = Object.values(document.paths)
      .flatMap((item) => Object.values(item))
      .filter((op) =>
        (op.parameters ?? []).some(
          (p) => (p as { $ref?: string }).$ref === '#/components/parameters/IdempotencyKey',
        ),
      );
    expect(declaring.map((op) => op.operationId).sort()).toEqual(
      [
        'createTransaction',
        'executeConsoleWorkflow',
        'runConsolePal',
        'runConsoleWorkflow',
        'runTransaction',
        'runTransactionWorkflow',
        'runUserWorkflow',
      ].sort(),
    );
    for (const op of declaring)
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['409', '422']));
    expect(document.components.parameters.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
    });
    expect(h.undeclaredStatuses()).toEqual([]);
  });
});
