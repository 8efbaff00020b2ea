// Group commit over HTTP (SQLite, docs/performance.md): a T1 creation is answered only once its
// COMMIT is durable, and a caller whose batch fails to commit gets an error, never a success.
// (That callers share COMMITs is shown by src/storage/sqlite-group-commit.test.ts, and what it
// gains by `npm run bench writes`, whose load comes from another process.) The batch is
// made to fail for real: a transaction planted beside the requests writes a row whose deferred
// foreign key SQLite checks only at COMMIT, which then fails for every transaction in the batch.
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from './engine.js';
import { startHarness, type Harness } from './harness.js';

describe.runIf(engine === 'sqlite')('group commit under T1 load (sqlite)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await sql`create table poison (enterprise_id text references enterprises (id) deferrable initially deferred)`.execute(
      h.domain.db,
    );
  });
  afterAll(() => h?.close());

  const create = () =>
    h.http('/services/rest/transactions', {
      method: 'POST',
      accept: 'application/json',
      body: new URLSearchParams({ palId: 'expense-approval' }),
    });
  const storedIds = async () =>
    new Set(
      (
        await h.domain.db
          .selectFrom('transactions')
          .select('id')
          .where('enterprise_id', '=', h.a.enterpriseId)
          .execute()
      ).map((r) => r.id),
    );

  it('answers each concurrent creation only once another connection can read it', async () => {
    const path = (h.config.database as { path: string }).path;
    const observer = new Database(path, { readonly: true });
    try {
      const visible = observer.prepare('select count(*) from transactions where id = ?').pluck();
      const answers = await Promise.all(
        Array.from({ length: 64 }, async () => {
          const answer = await create();
          const id = JSON.parse(answer.text) as string;
          return { status: answer.status, visible: visible.get(id) === 1 };
        }),
      );
      expect(answers).toEqual(answers.map(() => ({ status: 200, visible: true })));
    } finally {
      observer.close();
    }
  });

  it('answers an error to every request whose batch failed to commit, and stores none of them', async () => {
    const before = await storedIds();
    let release!: () => void;
    const gate = new Promise<void>((done) => (release = done));
    // A transaction that will fail its batch's COMMIT holds the writer while requests come in:
    // they wait for it, and join its batch once it lets go.
    const poisoned = h.domain.db.transaction().execute(async (trx) => {
      await sql`insert into poison (enterprise_id) values ('no such enterprise')`.execute(trx);
      await gate;
    });
    const answering = Promise.all(Array.from({ length: 8 }, create));
    await new Promise((done) => setTimeout(done, 1000));
    release();
    await expect(poisoned).rejects.toThrow(/FOREIGN KEY/);
    const answers = await answering;
    // And the next batch is a fresh one.
    answers.push(...(await Promise.all(Array.from({ length: 4 }, create))));

    const failed = answers.filter((a) => a.status !== 200);
    const succeeded = answers.filter((a) => a.status === 200);
    expect(failed.length).toBeGreaterThan(0);
    expect(succeeded.length).toBeGreaterThanOrEqual(4);
    // A failed commit is the server's failure, answered in the negotiated format.
    for (const answer of failed) {
      expect(answer.status).toBe(500);
      expect(answer.type).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text)).toMatchObject({ success: false });
    }
    // Exactly the acknowledged creations are stored: no failed one, and no acknowledged one lost.
    const stored = await storedIds();
    const created = [...stored].filter((id) => !before.has(id));
    const acknowledged = succeeded.map((a) => JSON.parse(a.text) as string);
    expect(new Set(created)).toEqual(new Set(acknowledged));
    expect(await sql`select count(*) as n from poison`.execute(h.domain.db)).toMatchObject({
      rows: [{ n: 0 }],
    });
  });
});
