// The audit log's storage rules on the project's engine: records go with their act's
// transaction (a rolled-back act leaves none), rows cannot be changed, the retention sweep
// removes only what is older than AUDIT_RETENTION_DAYS, and attempts anyone may repeat are
// recorded within a bound.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock, testContext, type TestContext } from '../../test/helpers.js';
import { AttemptBudget } from './audit-attempts.js';
import { listAuditRecords, recordAudit, sweepAuditLog, type AuditRecord } from './audit.js';
import { createEnterprise } from './enterprises.js';
import { runInScope } from './request-scope.js';

const clock = manualClock();
let t: TestContext;
let enterpriseId: string;
beforeAll(async () => {
  t = await testContext({ AUDIT_RETENTION_DAYS: '30' }, { now: clock.now });
  enterpriseId = (await createEnterprise(t.ctx, 'Audited')).id;
});
afterAll(() => t?.close());

async function records(since?: Date): Promise<AuditRecord[]> {
  const all: AuditRecord[] = [];
  for await (const record of listAuditRecords(t.ctx, enterpriseId, since)) all.push(record);
  return all;
}

describe('the audit log', () => {
  it('names the request scope (who, address, request id) unless the entry does', async () => {
    const before = (await records()).length;
    await runInScope(
      { requestId: 'req-1', ip: '192.0.2.7', actor: { type: 'client', id: 'acme-app' } },
      async () => {
        await recordAudit(t.ctx, t.ctx.db, {
          action: 'sso.created',
          enterpriseId,
          target: { type: 'sso', id: 'S1' },
        });
        await recordAudit(t.ctx, t.ctx.db, {
          action: 'sso.activated',
          enterpriseId,
          actor: { type: 'sso', id: 'S1' },
          details: { a: 1, b: 'two', c: true },
        });
      },
    );
    await recordAudit(t.ctx, t.ctx.db, { action: 'pal.deployed', enterpriseId });
    const added = (await records()).slice(before);
    expect(added).toEqual([
      {
        id: expect.any(Number),
        time: clock.now().toISOString(),
        enterpriseId,
        action: 'sso.created',
        outcome: 'success',
        actorType: 'client',
        actor: 'acme-app',
        targetType: 'sso',
        target: 'S1',
        ip: '192.0.2.7',
        requestId: 'req-1',
      },
      expect.objectContaining({
        action: 'sso.activated',
        actorType: 'sso',
        actor: 'S1',
        requestId: 'req-1',
        details: { a: 1, b: 'two', c: true },
      }),
      // Outside any request: the system.
      expect.objectContaining({ action: 'pal.deployed', actorType: 'system' }),
    ]);
    expect(added[2]).not.toHaveProperty('ip');
  });

  it("is written in the act's transaction: a rolled-back act leaves no record", async () => {
    const before = (await records()).length;
    await expect(
      t.ctx.db.transaction().execute(async (trx) => {
        await recordAudit(t.ctx, trx, { action: 'sso.deleted', enterpriseId });
        throw new Error('the act failed');
      }),
    ).rejects.toThrow('the act failed');
    expect((await records()).length).toBe(before);
  });

  it('refuses to change a record (append-only)', async () => {
    await recordAudit(t.ctx, t.ctx.db, { action: 'sso.updated', enterpriseId });
    await expect(
      t.ctx.db.updateTable('audit_log').set({ outcome: 'failure' }).execute(),
    ).rejects.toThrow(/append-only/);
    expect((await records()).every((r) => r.outcome === 'success')).toBe(true);
  });

  it('keeps records AUDIT_RETENTION_DAYS and sweeps the older ones; --since reads from a time', async () => {
    const start = clock.now();
    await recordAudit(t.ctx, t.ctx.db, { action: 'grant.given', enterpriseId });
    clock.advance(20 * 86_400_000);
    await recordAudit(t.ctx, t.ctx.db, { action: 'grant.removed', enterpriseId });
    const kept = (await records()).length;
    expect((await records(new Date(start.getTime() + 1))).map((r) => r.action)).toEqual([
      'grant.removed',
    ]);
    expect(await sweepAuditLog(t.ctx)).toBe(0); // the oldest is 20 days old
    clock.advance(11 * 86_400_000);
    // Now everything before the last record is older than 30 days.
    expect(await sweepAuditLog(t.ctx)).toBe(kept - 1);
    expect((await records()).map((r) => r.action)).toEqual(['grant.removed']);
  });

  it('lists a long log page by page, in the order it was written', async () => {
    const rows = Array.from({ length: 2_345 }, (_, i) => ({
      at: clock.now().toISOString(),
      enterprise_id: enterpriseId,
      action: 'token.issued',
      outcome: 'success' as const,
      actor_type: 'system',
      actor: null,
      target_type: null,
      target: String(i),
      ip: null,
      request_id: null,
      details: null,
    }));
    for (let i = 0; i < rows.length; i += 500)
      await t.ctx.db
        .insertInto('audit_log')
        .values(rows.slice(i, i + 500))
        .execute();
    const listed = (await records()).filter((r) => r.action === 'token.issued');
    expect(listed.map((r) => r.target)).toEqual(rows.map((r) => r.target));
    const { n } = await sql<{
      n: number;
    }>`select count(*) as n from audit_log where action = 'token.issued'`
      .execute(t.ctx.db)
      .then((r) => r.rows[0]!);
    expect(Number(n)).toBe(2_345);
  });
});

describe('AttemptBudget', () => {
  it('lets through a few records a minute per key and counts the rest into the next one', () => {
    const budget = new AttemptBudget(3);
    const at = 1_000_000;
    expect([1, 2, 3].map(() => budget.take('k', at).record)).toEqual([true, true, true]);
    expect(budget.take('k', at + 10)).toEqual({ record: false, unrecorded: 0 });
    expect(budget.take('k', at + 20)).toEqual({ record: false, unrecorded: 0 });
    expect(budget.take('other', at + 20)).toEqual({ record: true, unrecorded: 0 });
    // A minute later: recorded again, saying two went unrecorded.
    expect(budget.take('k', at + 60_000)).toEqual({ record: true, unrecorded: 2 });
    expect(budget.take('k', at + 60_001)).toEqual({ record: true, unrecorded: 0 });
  });
});
