// The outbox's claim on each engine: of several handles (pools, processes) claiming at once,
// each message goes to one; a lapsed lease lets another take it, and the first holder can then
// no longer record an outcome; an announcement reaches listeners only once its transaction
// commits.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engine, freshDatabaseEnv } from '../../test/engine.js';
import { migratedDatabase, tempDir, testConfig } from '../../test/helpers.js';
import type { Db } from './database.js';
import { dialectOf } from './adapter-dialect.js';
import { CompiledQuery } from 'kysely';
import {
  claimDueMessages,
  claimDueQuery,
  insertOutboxMessages,
  recordAttempt,
  requeueMessage,
} from './outbox-messages.js';
import { openDatabase } from './database.js';

const T0 = '2025-01-01T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

describe(`outbox messages (${engine})`, () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Db;
  let config: ReturnType<typeof testConfig>;
  beforeEach(async () => {
    dir = tempDir();
    config = testConfig(dir.path, await freshDatabaseEnv());
    db = await migratedDatabase(config);
  });
  afterEach(async () => {
    await db.destroy();
    dir.remove();
  });

  const messages = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `msg_${String(i).padStart(4, '0')}`,
      kind: 'mail' as const,
      enterpriseId: null,
      payload: `payload ${i}`,
    }));

  it('gives each message to one of several handles claiming at once', async () => {
    await insertOutboxMessages(db, messages(200), T0);
    const handles = Array.from({ length: 4 }, () => openDatabase(config));
    try {
      const taken: string[][] = handles.map(() => []);
      await Promise.all(
        handles.map(async (handle, i) => {
          for (;;) {
            const claimed = await claimDueMessages(handle, {
              claim: `claim-${i}`,
              now: at(1),
              leaseUntil: at(60),
              limit: 7,
            });
            if (claimed.length === 0) return;
            taken[i]!.push(...claimed.map((m) => m.id));
          }
        }),
      );
      const all = taken.flat();
      expect(all).toHaveLength(200);
      expect(new Set(all).size).toBe(200);
    } finally {
      await Promise.all(handles.map((h) => h.destroy()));
    }
  });

  it('a lapsed lease frees the message; the first holder can no longer record its outcome', async () => {
    await insertOutboxMessages(db, messages(1), T0);
    const [first] = await claimDueMessages(db, {
      claim: 'a',
      now: at(1),
      leaseUntil: at(60),
      limit: 10,
    });
    expect(first).toMatchObject({ id: 'msg_0000', attempts: 1, claim: 'a' });
    // Held: not due before the lease ends.
    expect(
      await claimDueMessages(db, { claim: 'b', now: at(59), leaseUntil: at(120), limit: 10 }),
    ).toEqual([]);
    const [again] = await claimDueMessages(db, {
      claim: 'b',
      now: at(60),
      leaseUntil: at(120),
      limit: 10,
    });
    expect(again).toMatchObject({ id: 'msg_0000', attempts: 2, claim: 'b' });
    const delivered = { kind: 'delivered' as const, now: at(61), clearPayload: true };
    expect(await recordAttempt(db, 'msg_0000', 'a', delivered)).toBe(false);
    expect(await recordAttempt(db, 'msg_0000', 'b', delivered)).toBe(true);
    const row = await db.selectFrom('outbox_messages').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: 'delivered',
      claim: null,
      payload: '',
      finished_at: at(61),
    });
    // Finished: nothing to claim; redelivery makes it due again with a fresh window.
    expect(
      await claimDueMessages(db, { claim: 'c', now: at(999), leaseUntil: at(1999), limit: 10 }),
    ).toEqual([]);
    expect(await requeueMessage(db, 'msg_0000', at(1000))).toBe(true);
    expect(await requeueMessage(db, 'msg_0000', at(1000))).toBe(false);
    const [requeued] = await claimDueMessages(db, {
      claim: 'd',
      now: at(1000),
      leaseUntil: at(1060),
      limit: 10,
    });
    expect(requeued).toMatchObject({ retries_since: at(1000), attempts: 3 });
  });

  it('announces messages to listeners when their transaction commits, never on rollback', async () => {
    let heard = 0;
    const stop = await dialectOf(db).listenOutbox(db, () => (heard += 1));
    try {
      const settle = () => new Promise((done) => setTimeout(done, 200));
      await settle();
      const before = heard;
      await db
        .transaction()
        .execute(async (trx) => {
          await insertOutboxMessages(trx, messages(1), T0);
          throw new Error('rolled back');
        })
        .catch(() => {});
      await settle();
      expect(await db.selectFrom('outbox_messages').select('id').execute()).toEqual([]);
      // SQLite calls its listeners at once (their reads wait for the commit); PostgreSQL's NOTIFY
      // of a rolled-back transaction is never sent.
      if (engine === 'postgres') expect(heard).toBe(before);
      const beforeCommit = heard;
      await db.transaction().execute((trx) => insertOutboxMessages(trx, messages(1), T0));
      await settle();
      expect(heard).toBeGreaterThan(beforeCommit);
    } finally {
      await stop();
    }
  });

  // SQLite's planner, left to itself, drove the claim's UPDATE from the due index: every due
  // message read once per claim, 2.5 ms a claim under a backlog of 10,000 (docs/performance.md).
  it.runIf(engine === 'sqlite')(
    'finds the claimed messages by their key, not by the due index',
    async () => {
      const compiled = claimDueQuery(db, {
        claim: 'c',
        now: T0,
        leaseUntil: at(60),
        limit: 8,
      }).compile();
      const plan = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      );
      const details = plan.rows.map((row) => row.detail);
      // The first step is the UPDATE's own search; the subquery's comes after it.
      expect(details[0]).toMatch(
        /^SEARCH outbox_messages USING (COVERING )?INDEX sqlite_autoindex_outbox_messages_1 \(id=\?\)/,
      );
      expect(details.some((d) => /LIST SUBQUERY/.test(d))).toBe(true);
    },
  );
});
