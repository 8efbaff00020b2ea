// The sweeps remove a backlog larger than one batch whole, a batch per statement, and keep what
// is still in use: entry tokens, browser sessions (each with its audit record) and delivered
// outbox messages, on the project's engine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployManifest, manualClock, testContext, type TestContext } from '../../test/helpers.js';
import { insertOutboxMessages } from '../storage/outbox-messages.js';
import { OutboxDispatcher } from '../outbox/dispatcher.js';
import { createEnterprise } from './enterprises.js';
import { SESSION_IDLE_MS, sweepSessions } from './sessions.js';
import { inSweepBatches, oneRoundAtATime, SWEEP_BATCH } from './sweep-batches.js';
import { sweepTokens } from './tokens.js';

/** More than two batches, and not a multiple of one. */
const BACKLOG = 2 * SWEEP_BATCH + 345;

const clock = manualClock();
let t: TestContext;
let enterpriseId: string;
beforeAll(async () => {
  t = await testContext({}, { now: clock.now });
  enterpriseId = (await createEnterprise(t.ctx, 'Swept')).id;
  await deployManifest(t.ctx, enterpriseId, { id: 'p', modes: { console: true } });
});
afterAll(() => t?.close());

const iso = (offsetMs: number) => new Date(clock.now().getTime() + offsetMs).toISOString();

describe('inSweepBatches', () => {
  it('asks for a batch at a time until one comes back short, and adds them up', async () => {
    const asked: number[] = [];
    let left = BACKLOG;
    const total = await inSweepBatches(async (limit) => {
      asked.push(limit);
      const done = Math.min(limit, left);
      left -= done;
      return done;
    });
    expect(total).toBe(BACKLOG);
    expect(asked).toEqual([SWEEP_BATCH, SWEEP_BATCH, SWEEP_BATCH]);
  });
});

describe('oneRoundAtATime', () => {
  it('lets a call pass while the last round is under way, and runs the next after it', async () => {
    let started = 0;
    let finish = () => {};
    const tick = oneRoundAtATime(async () => {
      started++;
      await new Promise<void>((done) => (finish = done));
    });
    tick();
    tick();
    expect(started).toBe(1);
    finish();
    await new Promise((done) => setImmediate(done));
    tick();
    expect(started).toBe(2);
    finish();
  });
});

describe('the sweeps, over a backlog of several batches', () => {
  it('remove every spent entry token and no live one', async () => {
    const token = (hash: string, usedAt: string | null, expiresAt: string) => ({
      token_hash: hash,
      kind: 'console',
      enterprise_id: enterpriseId,
      pal_id: 'p',
      transaction_id: null,
      sso_id: null,
      action: null,
      data: null,
      created_at: iso(-1000),
      expires_at: expiresAt,
      used_at: usedAt,
    });
    const rows = [
      ...Array.from({ length: BACKLOG }, (_, i) =>
        i % 2 ? token(`used-${i}`, iso(-500), iso(60_000)) : token(`expired-${i}`, null, iso(-1)),
      ),
      token('live-1', null, iso(60_000)),
      token('live-2', null, iso(60_000)),
    ];
    for (let i = 0; i < rows.length; i += 500)
      await t.ctx.db
        .insertInto('tokens')
        .values(rows.slice(i, i + 500))
        .execute();

    expect(await sweepTokens(t.ctx)).toBe(BACKLOG);
    const left = await t.ctx.db.selectFrom('tokens').select('token_hash').execute();
    expect(left.map((r) => r.token_hash).sort()).toEqual(['live-1', 'live-2']);
    expect(await sweepTokens(t.ctx)).toBe(0);
  });

  it('remove every ended browser session, each with its session.ended record', async () => {
    const session = (id: string, lastSeenAt: string) => ({
      id_hash: id,
      kind: 'console' as const,
      enterprise_id: enterpriseId,
      pal_id: 'p',
      transaction_id: null,
      sso_id: null,
      role: null,
      profile: 'personal' as const,
      csrf: 'c',
      outcome: null,
      created_at: iso(-SESSION_IDLE_MS - 2000),
      last_seen_at: lastSeenAt,
    });
    const rows = [
      ...Array.from({ length: BACKLOG }, (_, i) => session(`idle-${i}`, iso(-SESSION_IDLE_MS - 1))),
      session('live', iso(-1000)),
    ];
    for (let i = 0; i < rows.length; i += 500)
      await t.ctx.db
        .insertInto('browser_sessions')
        .values(rows.slice(i, i + 500))
        .execute();
    const endedRecords = async () =>
      (
        await t.ctx.db
          .selectFrom('audit_log')
          .select('id')
          .where('action', '=', 'session.ended')
          .execute()
      ).length;
    const recordsBefore = await endedRecords();

    expect(await sweepSessions(t.ctx)).toBe(BACKLOG);
    const left = await t.ctx.db.selectFrom('browser_sessions').select('id_hash').execute();
    expect(left.map((r) => r.id_hash)).toEqual(['live']);
    expect((await endedRecords()) - recordsBefore).toBe(BACKLOG);
  });

  it('remove every finished outbox message past its retention, and keep the pending ones', async () => {
    const messages = Array.from({ length: BACKLOG + 3 }, (_, i) => ({
      id: `msg_swept_${i}`,
      kind: 'mail' as const,
      enterpriseId,
      payload: '',
    }));
    await insertOutboxMessages(t.ctx.db, messages, iso(0));
    // All delivered long ago but the last three, still pending.
    const old = iso(-(t.ctx.config.outbox.retentionMs + 60_000));
    await t.ctx.db
      .updateTable('outbox_messages')
      .set({ status: 'delivered', finished_at: old })
      .where(
        'id',
        'in',
        messages.slice(0, BACKLOG).map((m) => m.id),
      )
      .execute();

    const dispatcher = new OutboxDispatcher(t.ctx);
    expect(await dispatcher.sweepFinished()).toBe(BACKLOG);
    const left = await t.ctx.db.selectFrom('outbox_messages').select(['id', 'status']).execute();
    expect(left.map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);
  });
});
