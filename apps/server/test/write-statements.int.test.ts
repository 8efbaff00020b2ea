// How many SQL statements one request of the hot write paths runs (docs/performance.md, "Fewer
// statements per write"), over real HTTP: T1, T6 with a trivial workflow, T5 and the entry of its
// token. Counted where Kysely runs every query (COMMITs and the change stamp's polls are not
// queries of the request); the counts are an upper bound, so that a read that comes back shows.
import type { CompiledQuery, QueryResult } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPalPackage } from '../src/domain/pal-manifest.js';
import { deployPalPackage } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import type { Db } from '../src/storage/database.js';
import {
  deleteSignatures,
  findFieldValues,
  findSignatures,
  insertSignatures,
  upsertFieldValues,
  type SignatureRow,
} from '../src/storage/document-state.js';
import { startHarness, type Harness } from './harness.js';

type Execute = (query: CompiledQuery, ...rest: unknown[]) => Promise<QueryResult<unknown>>;

/** Records the SQL of every query the database (and its transactions) runs, until stopped. */
function traceStatements(db: Db) {
  let owner = Object.getPrototypeOf(db.getExecutor()) as { executeQuery: Execute } | null;
  while (owner && !Object.hasOwn(owner, 'executeQuery'))
    owner = Object.getPrototypeOf(owner) as { executeQuery: Execute } | null;
  if (!owner) throw new Error('no executeQuery on the executor');
  const patched = owner;
  const original = patched.executeQuery;
  const seen: string[] = [];
  patched.executeQuery = function (this: unknown, query, ...rest) {
    seen.push(query.sql);
    return original.call(this, query, ...rest);
  };
  return {
    /** The statements since the last take. */
    take: () => seen.splice(0),
    stop: () => {
      patched.executeQuery = original;
    },
  };
}

const TRIVIAL =
  'export function runWorkflow(input) { return { messages: [{ message: "ok" }] }; }\n';

/** Sets 20 variables to values of its input's n; answers what the run before it had set. */
const TWENTY_VARIABLES = `export function runWorkflow(input, pal) {
  const before = [];
  for (let i = 0; i < 20; i++) {
    before.push(pal.vars.get('v' + i) ?? '-');
    pal.vars.set('v' + i, input.values.n + '.' + i);
  }
  return { messages: [{ message: before.join(' ') }] };
}
`;

let h: Harness;
let sso: string;
let trace: ReturnType<typeof traceStatements>;
beforeAll(async () => {
  h = await startHarness({ settleOutbox: false });
  for (const [id, source] of [
    ['trivial', TRIVIAL],
    ['twenty-variables', TWENTY_VARIABLES],
  ])
    await deployPalPackage(
      h.domain,
      h.a.enterpriseId,
      await buildPalPackage(
        {
          id,
          modes: { transaction: true },
          workflows: { transaction: 'workflows/transaction.js' },
        },
        { 'workflows/transaction.js': source },
      ),
    );
  sso = await createSso(h.domain, h.a.enterpriseId, {
    firstName: 'Stella',
    lastName: 'Statement',
    email: 'stella@example.test',
  });
  trace = traceStatements(h.domain.db);
});
afterAll(async () => {
  trace?.stop();
  await h?.close();
});

/**
 * The statements of one call, once a warm-up call has filled the caches. The client's credentials
 * are left out: their cache (http/credentials.ts) is not the write path, and on PostgreSQL it
 * caches nothing while the change stamp's last poll is too old to trust. So are the outbox's
 * claims, which its own timer runs whenever it is due, not the request (a Node 22 run of the CI
 * counted one inside T5's entry).
 */
async function statementsOf(call: () => Promise<unknown>): Promise<string[]> {
  await call();
  trace.take();
  await call();
  return trace
    .take()
    .filter(
      (statement) =>
        !statement.includes('from "api_clients"') &&
        !statement.startsWith('update "outbox_messages" set "claim"'),
    );
}

const createTransaction = (palId = 'trivial') =>
  h.http('/services/rest/transactions', {
    method: 'POST',
    accept: 'text/plain',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `palId=${palId}`,
  });

describe('statements per write', () => {
  it('T1 createTransaction', async () => {
    const statements = await statementsOf(async () => {
      expect((await createTransaction()).status).toBe(200);
    });
    expect(statements.length, statements.join('\n')).toBeLessThanOrEqual(3);
  });

  it('T6 runTransactionWorkflow, a trivial workflow', async () => {
    const id = (await createTransaction()).text.trim();
    const statements = await statementsOf(async () => {
      const run = await h.http(`/services/rest/transactions/${id}/runWorkflow`, {
        method: 'POST',
        accept: 'application/json',
        headers: { 'content-type': 'application/json' },
        body: '{"postData":[{"name":"n","value":"1"}]}',
      });
      expect(run.status, run.text).toBe(200);
    });
    expect(statements.length, statements.join('\n')).toBeLessThanOrEqual(8);
  });

  it('T6 of a workflow that sets 20 variables writes them in two statements (16 and 4 rows)', async () => {
    const id = (await createTransaction('twenty-variables')).text.trim();
    let n = 0;
    const answers: string[] = [];
    const statements = await statementsOf(async () => {
      n += 1;
      const run = await h.http(`/services/rest/transactions/${id}/runWorkflow`, {
        method: 'POST',
        accept: 'application/json',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ postData: [{ name: 'n', value: String(n) }] }),
      });
      expect(run.status, run.text).toBe(200);
      answers.push(run.text);
    });
    const variableWrites = statements.filter((s) => s.startsWith('insert into "variables"'));
    expect(variableWrites, statements.join('\n')).toHaveLength(2);
    expect(statements.length, statements.join('\n')).toBeLessThanOrEqual(8 + 1 + 2);
    // The second run read every value the first had written, not only the first rows of a part.
    const firstRun = Array.from({ length: 20 }, (_, i) => `1.${i}`).join(' ');
    expect(answers[1]).toContain(firstRun);
  });

  it('T5 issue, then the entry of its token', async () => {
    const id = (await createTransaction()).text.trim();
    const issue = async () => {
      const answer = await h.http(`/services/rest/transactions/${id}/token`, {
        method: 'POST',
        accept: 'text/plain',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `userSSO=${sso}`,
      });
      expect(answer.status, answer.text).toBe(200);
      return answer.text.trim();
    };
    const issued = await statementsOf(issue);
    expect(issued.length, issued.join('\n')).toBeLessThanOrEqual(4);
    const entered = await statementsOf(async () => {
      const token = await issue();
      trace.take();
      const entry = await fetch(`${h.url}/services/enter/${token}`, { redirect: 'manual' });
      expect(entry.status, await entry.text()).toBe(303);
    });
    expect(entered.length, entered.join('\n')).toBeLessThanOrEqual(7);
  });
});

describe("multi-row writes of a transaction's documents", () => {
  const signature = (tx: string, id: string, recordTime: number): SignatureRow => ({
    transaction_id: tx,
    file: 'documents/form.pdf',
    signature_id: id,
    enterprise_id: h.a.enterpriseId,
    role: 'signer',
    sso_id: sso,
    kind: 'TYPED',
    image: null,
    text: 'Stella Statement',
    record_time: recordTime,
    signer_name: 'Stella Statement',
    signer_email: 'stella@example.test',
    ip_address: '127.0.0.1',
    user_agent: 'test',
  });

  it('field values: 600 set in four statements (512, 64, 16 and 8 rows), then changed in place', async () => {
    const tx = (await createTransaction()).text.trim();
    const key = { enterpriseId: h.a.enterpriseId, transactionId: tx, now: '2026-11-27T00:00:00Z' };
    const values = (word: string) =>
      Array.from({ length: 600 }, (_, i) => ({
        file: 'documents/form.pdf',
        fieldId: `f${i}`,
        value: `${word}${i}`,
      }));
    trace.take();
    await h.domain.db.transaction().execute((trx) => upsertFieldValues(trx, key, values('a')));
    expect(trace.take().filter((s) => s.startsWith('insert'))).toHaveLength(4);
    await h.domain.db
      .transaction()
      .execute((trx) => upsertFieldValues(trx, key, values('b').slice(0, 20)));
    const kept = new Map((await findFieldValues(h.domain.db, tx)).map((v) => [v.fieldId, v.value]));
    expect(kept.size).toBe(600);
    expect(kept.get('f0')).toBe('b0');
    expect(kept.get('f19')).toBe('b19');
    expect(kept.get('f20')).toBe('a20');
    expect(kept.get('f599')).toBe('a599');
  });

  it('signatures: none replaced (false when one was there), taken back in the order asked', async () => {
    const tx = (await createTransaction()).text.trim();
    const given = ['s1', 's2', 's3'].map((id, i) => signature(tx, id, 1000 + i));
    expect(await insertSignatures(h.domain.db, given)).toBe(true);
    // s4 is new, s2 was given: nothing of the call may stand, so its caller rolls back.
    await expect(
      h.domain.db.transaction().execute(async (trx) => {
        if (!(await insertSignatures(trx, [signature(tx, 's4', 2000), signature(tx, 's2', 2001)])))
          throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(
      (await findSignatures(h.domain.db, tx)).map((r) => [r.signature_id, r.record_time]),
    ).toEqual([
      ['s1', 1000],
      ['s2', 1001],
      ['s3', 1002],
    ]);

    const removed = await deleteSignatures(h.domain.db, tx, [
      { file: 'documents/form.pdf', signatureId: 's3' },
      { file: 'documents/form.pdf', signatureId: 'nobody' },
      { file: 'documents/other.pdf', signatureId: 's2' },
      { file: 'documents/form.pdf', signatureId: 's1' },
    ]);
    expect(removed.map((r) => [r.signature_id, r.record_time])).toEqual([
      ['s3', 1002],
      ['s1', 1000],
    ]);
    expect((await findSignatures(h.domain.db, tx)).map((r) => r.signature_id)).toEqual(['s2']);
  });
});
