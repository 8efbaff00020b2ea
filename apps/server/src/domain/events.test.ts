// Events written to the outbox in the transaction of their change (docs/events.md), read back
// from outbox_messages: the expiry sweep's moves, a rolled-back change that leaves none, and
// the fan-out to the endpoints subscribed to a type.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deployManifest, manualClock, testContext, type TestContext } from '../../test/helpers.js';
import { createEnterprise } from './enterprises.js';
import { createSso } from './ssos.js';
import { createTransaction, expireDueTransactions } from './transactions.js';
import { addWebhookEndpoint } from './webhooks.js';

describe('events in the outbox', () => {
  let t: TestContext;
  let clock: ReturnType<typeof manualClock>;
  let enterprise: string;
  beforeEach(async () => {
    clock = manualClock();
    t = await testContext({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { now: clock.now });
    enterprise = (await createEnterprise(t.ctx, 'Events')).id;
  });
  afterEach(() => t.close());

  const bodies = async (endpointId?: string) =>
    (
      await t.ctx.db
        .selectFrom('outbox_messages')
        .select(['payload', 'endpoint_id'])
        .where('kind', '=', 'webhook')
        .$if(endpointId !== undefined, (q) => q.where('endpoint_id', '=', endpointId!))
        .orderBy('created_at')
        .orderBy('event_type')
        .execute()
    ).map((m) => JSON.parse(m.payload) as { type: string; data: Record<string, unknown> });

  it('the expiry sweep writes a status change per transaction it moves, with the state it left', async () => {
    await deployManifest(t.ctx, enterprise, {
      id: 'short',
      modes: { transaction: true },
      lifetimes: { executeDays: 1, accessDays: 2 },
    });
    const tx = await createTransaction(t.ctx, enterprise, 'short');
    const { id } = await addWebhookEndpoint(t.ctx, enterprise, { url: 'http://127.0.0.1:9/h' });
    clock.advance(1.5 * 86_400_000);
    expect(await expireDueTransactions(t.ctx)).toEqual({ expired: 1, archived: 0 });
    clock.advance(86_400_000);
    expect(await expireDueTransactions(t.ctx)).toEqual({ expired: 0, archived: 1 });
    const moves = (await bodies(id)).map((b) => [
      b.type,
      b.data.transactionId,
      (b.data.previous as { systemStatus: string }).systemStatus,
      (b.data.current as { systemStatus: string }).systemStatus,
      b.data.changed,
    ]);
    expect(moves).toEqual([
      ['transaction.status_changed', tx.id, 'OPEN', 'EXPIRED', ['systemStatus']],
      ['transaction.status_changed', tx.id, 'EXPIRED', 'ARCHIVED', ['systemStatus']],
    ]);
  });

  it('writes one message per subscribed endpoint, and none for a change that rolled back', async () => {
    const all = await addWebhookEndpoint(t.ctx, enterprise, { url: 'http://127.0.0.1:9/a' });
    const ssoOnly = await addWebhookEndpoint(t.ctx, enterprise, {
      url: 'http://127.0.0.1:9/b',
      events: ['sso.created'],
    });
    const txOnly = await addWebhookEndpoint(t.ctx, enterprise, {
      url: 'http://127.0.0.1:9/c',
      events: ['transaction.created'],
    });
    const sso = await createSso(t.ctx, enterprise, {
      firstName: 'E',
      lastName: 'V',
      email: 'ev@example.test',
    });
    // A taken address: E1 fails inside its transaction, and its event goes with it.
    await expect(
      createSso(t.ctx, enterprise, { firstName: 'E', lastName: 'V', email: 'EV@example.test' }),
    ).rejects.toMatchObject({ statusCode: 409 });
    expect(await bodies(all.id)).toEqual([
      {
        type: 'sso.created',
        timestamp: clock.now().toISOString(),
        data: { sso, status: 'ACTIVE' },
      },
    ]);
    expect((await bodies(ssoOnly.id)).map((b) => b.type)).toEqual(['sso.created']);
    expect(await bodies(txOnly.id)).toEqual([]);
    // Another enterprise's endpoint hears nothing of this one.
    const other = (await createEnterprise(t.ctx, 'Other')).id;
    const elsewhere = await addWebhookEndpoint(t.ctx, other, { url: 'http://127.0.0.1:9/d' });
    await createSso(t.ctx, enterprise, { firstName: 'F', lastName: 'W', email: 'fw@example.test' });
    expect(await bodies(elsewhere.id)).toEqual([]);
  });
});
