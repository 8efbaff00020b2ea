// The outbox's claim on each engine: of several handles (pools, processes) claiming at once,
// each message goes to one; a lapsed lease lets another take it, and the first holder can then
// no longer record an outcome; a claim takes only its lane's messages, and the walk of the
// endpoints with due webhooks finds each once; an announcement reaches listeners only once its
// transaction commits.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engine, freshDatabaseEnv } from '../../test/engine.js';
import { migratedDatabase, tempDir, testConfig } from '../../test/helpers.js';
import type { Db } from './database.js';
import { dialectOf } from './adapter-dialect.js';
import { CompiledQuery, sql } from 'kysely';
import {
  claimDueMessages,
  claimDueQuery,
  insertOutboxMessages,
  laneHeads,
  laneHeadsQuery,
  recordAttempt,
  requeueMessage,
} from './outbox-messages.js';
import { openDatabase } from './database.js';

const T0 = '2025-01-01T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();
const mail = { kind: 'mail', endpointId: null } as const;

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
              lane: mail,
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
      lane: mail,
    });
    expect(first).toMatchObject({ id: 'msg_0000', attempts: 1, claim: 'a' });
    // Held: not due before the lease ends.
    expect(
      await claimDueMessages(db, {
        claim: 'b',
        now: at(59),
        leaseUntil: at(120),
        limit: 10,
        lane: mail,
      }),
    ).toEqual([]);
    const [again] = await claimDueMessages(db, {
      claim: 'b',
      now: at(60),
      leaseUntil: at(120),
      limit: 10,
      lane: mail,
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
      await claimDueMessages(db, {
        claim: 'c',
        now: at(999),
        leaseUntil: at(1999),
        limit: 10,
        lane: mail,
      }),
    ).toEqual([]);
    expect(await requeueMessage(db, 'msg_0000', at(1000))).toBe(true);
    expect(await requeueMessage(db, 'msg_0000', at(1000))).toBe(false);
    const [requeued] = await claimDueMessages(db, {
      claim: 'd',
      now: at(1000),
      leaseUntil: at(1060),
      limit: 10,
      lane: mail,
    });
    expect(requeued).toMatchObject({ retries_since: at(1000), attempts: 3 });
  });

  /** Enterprise `ent_1` with endpoints `ep_1` … `ep_n`. */
  async function endpoints(n: number): Promise<string[]> {
    await db
      .insertInto('enterprises')
      .values({ id: 'ent_1', name: 'One', name_key: 'one', created_at: T0 })
      .execute();
    const ids = Array.from({ length: n }, (_, i) => `ep_${i + 1}`);
    await db
      .insertInto('webhook_endpoints')
      .values(
        ids.map((id) => ({
          id,
          enterprise_id: 'ent_1',
          url: `https://${id}.example.test/`,
          events: '*',
          secret: 'sealed',
          previous_secret: null,
          previous_secret_until: null,
          created_at: T0,
        })),
      )
      .execute();
    return ids;
  }

  const webhooks = (endpointId: string, n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => ({
      id: `hook_${endpointId}_${String(from + i).padStart(4, '0')}`,
      kind: 'webhook' as const,
      enterpriseId: 'ent_1',
      endpointId,
      payload: '{}',
    }));

  it("takes only the lane it is asked for: mails, or one endpoint's webhooks", async () => {
    const [one, two] = await endpoints(2);
    await insertOutboxMessages(db, webhooks(one!, 5), T0);
    await insertOutboxMessages(db, [...messages(2), ...webhooks(two!, 3)], at(1));
    const claim = (lane: Parameters<typeof claimDueMessages>[1]['lane'], limit = 10) =>
      claimDueMessages(db, { claim: 'x', now: at(2), leaseUntil: at(60), limit, lane }).then(
        (rows) => rows.map((row) => row.id).sort(),
      );
    expect(await claim(mail)).toEqual(['msg_0000', 'msg_0001']);
    expect(await claim({ kind: 'webhook', endpointId: two! })).toEqual(
      webhooks(two!, 3).map((m) => m.id),
    );
    // The oldest first, up to the limit.
    expect(await claim({ kind: 'webhook', endpointId: one! }, 2)).toEqual(
      webhooks(one!, 2).map((m) => m.id),
    );
    expect(await claim({ kind: 'completion', endpointId: null })).toEqual([]);
  });

  it('finds when each lane falls due: mails, completion jobs, each endpoint once', async () => {
    const ids = await endpoints(5);
    // ep_1: due since 30 s; ep_2: none; ep_3: due since 10 s, with a backlog; ep_4: held under a
    // lease and waiting for a retry, none due; ep_5: due since 20 s, and one delivered.
    await insertOutboxMessages(db, webhooks('ep_1', 1), at(30));
    await insertOutboxMessages(db, webhooks('ep_3', 200), at(10));
    await insertOutboxMessages(db, webhooks('ep_4', 2), at(0));
    await insertOutboxMessages(db, webhooks('ep_5', 2), at(20));
    await db
      .updateTable('outbox_messages')
      .set({ next_attempt_at: at(500) })
      .where('endpoint_id', '=', 'ep_4')
      .execute();
    await db
      .updateTable('outbox_messages')
      .set({ status: 'delivered', next_attempt_at: at(0) })
      .where('id', '=', webhooks('ep_5', 1)[0]!.id)
      .execute();
    await insertOutboxMessages(db, messages(3), at(40));
    expect(ids).toHaveLength(5);
    const heads = await laneHeads(db);
    expect(
      heads
        .filter((h) => h.kind === 'webhook')
        .sort((a, b) => (a.endpointId! < b.endpointId! ? -1 : 1)),
    ).toEqual([
      { kind: 'webhook', endpointId: 'ep_1', due: at(30) },
      { kind: 'webhook', endpointId: 'ep_3', due: at(10) },
      { kind: 'webhook', endpointId: 'ep_4', due: at(500) },
      { kind: 'webhook', endpointId: 'ep_5', due: at(20) },
    ]);
    expect(heads.filter((h) => h.kind !== 'webhook')).toEqual([
      { kind: 'mail', endpointId: null, due: at(40) },
      { kind: 'completion', endpointId: null, due: null },
    ]);
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
        lane: mail,
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

  // PostgreSQL reads an index in order only past equalities: each lane's claim must take its
  // first due messages from an index, not sort every due one (mails have no endpoint, so they
  // have an index of their own).
  it.runIf(engine === 'postgres')('claims each lane in index order on PostgreSQL', async () => {
    for (const lane of [mail, { kind: 'webhook', endpointId: 'ep_1' } as const]) {
      const compiled = claimDueQuery(db, {
        claim: 'c',
        now: T0,
        leaseUntil: at(60),
        limit: 4,
        lane,
      }).compile();
      const plan = await db.transaction().execute(async (trx) => {
        // An empty table is read whole; the plan for a backlog is the one asked about.
        await sql`set local enable_seqscan = off`.execute(trx);
        return trx.executeQuery<{ 'QUERY PLAN': string }>(
          CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
        );
      });
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).not.toMatch(/Sort/);
      expect(text).toMatch(
        lane.kind === 'mail' ? /outbox_messages_kind_due/ : /outbox_messages_lane/,
      );
    }
  });

  // A backlog of one endpoint must not be read by every claim: the walk seeks from one endpoint
  // to the next in the lane index, and the claim of a lane reads its due messages only.
  it.runIf(engine === 'sqlite')('walks the lane index, not the messages', async () => {
    // A connection plans with the schema it last read: run the statements once first, so that
    // both connections know of the lane index.
    await laneHeads(db);
    await claimDueMessages(db, {
      claim: 'c',
      now: T0,
      leaseUntil: at(60),
      limit: 4,
      lane: { kind: 'webhook', endpointId: 'ep_1' },
    });
    const compiled = claimDueQuery(db, {
      claim: 'c',
      now: T0,
      leaseUntil: at(60),
      limit: 4,
      lane: { kind: 'webhook', endpointId: 'ep_1' },
    }).compile();
    const claimPlan = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
    );
    expect(claimPlan.rows.map((row) => row.detail).join('\n')).toMatch(
      /SEARCH outbox_messages USING (COVERING )?INDEX outbox_messages_lane \(status=\? AND kind=\? AND endpoint_id=\? AND next_attempt_at<\?\)/,
    );
    const query = laneHeadsQuery().compile(db);
    const walk = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    const details = walk.rows.map((row) => row.detail);
    expect(details.filter((d) => /SCAN outbox_messages/.test(d))).toEqual([]);
    expect(details.filter((d) => /outbox_messages_lane/.test(d)).length).toBeGreaterThanOrEqual(3);
  });
});
