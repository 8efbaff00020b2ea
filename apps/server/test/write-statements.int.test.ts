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

let h: Harness;
let sso: string;
let trace: ReturnType<typeof traceStatements>;
beforeAll(async () => {
  h = await startHarness({ settleOutbox: false });
  await deployPalPackage(
    h.domain,
    h.a.enterpriseId,
    await buildPalPackage(
      {
        id: 'trivial',
        modes: { transaction: true },
        workflows: { transaction: 'workflows/transaction.js' },
      },
      { 'workflows/transaction.js': TRIVIAL },
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
 * caches nothing while the change stamp's last poll is too old to trust.
 */
async function statementsOf(call: () => Promise<unknown>): Promise<string[]> {
  await call();
  trace.take();
  await call();
  return trace.take().filter((statement) => !statement.includes('from "api_clients"'));
}

const createTransaction = () =>
  h.http('/services/rest/transactions', {
    method: 'POST',
    accept: 'text/plain',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'palId=trivial',
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
