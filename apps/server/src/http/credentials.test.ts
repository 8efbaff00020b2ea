// The credential cache and the failed sign-in throttle, on a real database.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, testContext, type TestContext } from '../../test/helpers.js';
import { pino } from 'pino';
import { createClient, deleteClient, upsertClientWithSecret } from '../domain/clients.js';
import { createWorkflowContext } from '../workflows/context.js';
import { createEnterprise } from '../domain/enterprises.js';
import { dialectOf } from '../storage/adapter-dialect.js';
import { openDatabase } from '../storage/database.js';
import { ClientCredentials } from './credentials.js';
import { sweepFailedSignIns } from '../domain/sign-in-failures.js';
import { AUTH_THROTTLE } from './sign-in-throttle.js';

describe('the sign-in throttle', () => {
  let t: TestContext;
  const clock = manualClock();
  let enterpriseId: string;
  let auth: ClientCredentials;
  beforeEach(async () => {
    t = await testContext({}, { now: clock.now });
    auth = new ClientCredentials(t.ctx);
    enterpriseId = (await createEnterprise(t.ctx, 'Acme Corp')).id;
  });
  afterEach(() => t.close());

  it('throttles a (username, address) pair after repeated failures, for the rest of the window', async () => {
    const client = await createClient(t.ctx, enterpriseId);
    const { maxFailures, windowSeconds } = AUTH_THROTTLE;
    for (let i = 0; i < maxFailures; i++)
      expect(await auth.throttle.recordFailure(client.username, '10.0.0.1')).toBe(0);
    expect(await auth.throttle.wait(client.username, '10.0.0.1')).toBe(windowSeconds);
    // The next failure is refused, and says how long to wait.
    expect(await auth.throttle.recordFailure(client.username, '10.0.0.1')).toBe(windowSeconds);
    // Other addresses and other usernames are not affected.
    expect(await auth.throttle.wait(client.username, '10.0.0.2')).toBe(0);
    expect(await auth.throttle.wait('someone-else', '10.0.0.1')).toBe(0);

    clock.advance(100_000);
    expect(await auth.throttle.wait(client.username, '10.0.0.1')).toBe(windowSeconds - 100);
    clock.advance(windowSeconds * 1000);
    expect(await auth.throttle.wait(client.username, '10.0.0.1')).toBe(0);
    // A failure after the window starts a new one.
    expect(await auth.throttle.recordFailure(client.username, '10.0.0.1')).toBe(0);
    expect(await auth.throttle.wait(client.username, '10.0.0.1')).toBe(0);
  });

  it('a success clears the failures of its pair', async () => {
    const client = await createClient(t.ctx, enterpriseId);
    for (let i = 0; i < AUTH_THROTTLE.maxFailures; i++)
      await auth.throttle.recordFailure(client.username, '::1');
    expect(await auth.throttle.wait(client.username, '::1')).toBeGreaterThan(0);
    await auth.throttle.succeeded(client.username, '::1');
    expect(await auth.throttle.wait(client.username, '::1')).toBe(0);
    // Nothing to clear now: no query.
    expect(auth.throttle.succeeded(client.username, '::1')).toBeUndefined();
  });

  it('counts the failures of every node on the database, and any text as a username', async () => {
    const client = await createClient(t.ctx, enterpriseId);
    const other = new ClientCredentials(t.ctx); // another node's throttle, on the same database
    for (let i = 0; i < AUTH_THROTTLE.maxFailures; i++)
      await (i % 2 ? other : auth).throttle.recordFailure(client.username, '10.0.0.9');
    expect(await auth.throttle.recordFailure(client.username, '10.0.0.9')).toBeGreaterThan(0);
    expect(await other.throttle.recordFailure(client.username, '10.0.0.9')).toBeGreaterThan(0);
    for (const odd of ['x'.repeat(10_000), 'nul\u0000name', 'ü ~/'])
      expect(await auth.throttle.recordFailure(odd, '10.0.0.9')).toBe(0);
    expect(await auth.throttle.wait('x'.repeat(10_000), '10.0.0.9')).toBe(0);
  });

  it("writes nothing for a throttled pair's further failures, on any node: its count stops", async () => {
    const client = await createClient(t.ctx, enterpriseId);
    const other = new ClientCredentials(t.ctx); // another node's throttle, on the same database
    const { maxFailures, windowSeconds } = AUTH_THROTTLE;
    const row = () =>
      t.ctx.db
        .selectFrom('sign_in_failures')
        .select(['failures', 'window_start'])
        .where('username', '=', client.username)
        .executeTakeFirstOrThrow();
    for (let i = 0; i < maxFailures; i++)
      expect(await auth.throttle.recordFailure(client.username, '10.0.0.7')).toBe(0);
    expect(await auth.throttle.recordFailure(client.username, '10.0.0.7')).toBe(windowSeconds);
    const throttled = await row();
    expect(throttled.failures).toBe(maxFailures + 1);
    clock.advance(10_000);
    for (let i = 0; i < 20; i++) {
      const node = i % 2 ? other : auth;
      expect(await node.throttle.recordFailure(client.username, '10.0.0.7')).toBe(
        windowSeconds - 10,
      );
    }
    expect(await row()).toEqual(throttled);
    // After the window, a failure counts again, in a new window.
    clock.advance(windowSeconds * 1000);
    expect(await other.throttle.recordFailure(client.username, '10.0.0.7')).toBe(0);
    expect((await row()).failures).toBe(1);
  });

  it('the sweep removes the windows that have ended', async () => {
    await auth.throttle.recordFailure('first', '10.0.0.1');
    clock.advance(AUTH_THROTTLE.windowSeconds * 1000);
    await auth.throttle.recordFailure('second', '10.0.0.1');
    expect(await sweepFailedSignIns(t.ctx)).toBe(1);
    expect(await sweepFailedSignIns(t.ctx)).toBe(0);
    expect(await t.ctx.db.selectFrom('sign_in_failures').select('username').execute()).toEqual([
      { username: 'second' },
    ]);
  });
});

describe('verified Authorization headers', () => {
  it('are remembered for a fast path and forgotten with their client', async () => {
    const { ctx, close } = await testContext();
    const auth = new ClientCredentials(ctx);
    try {
      const e = await createEnterprise(ctx, 'acme');
      const client = await createClient(ctx, e.id);
      const header = `Basic ${Buffer.from(`${client.username}:${client.password}`).toString('base64')}`;
      expect(auth.verifiedHeader(header)).toBeUndefined();
      const snapshot = auth.snapshot();
      const ok = await auth.authenticate(client.username, client.password);
      auth.rememberHeader(header, client.username, ok!, snapshot);
      expect(auth.verifiedHeader(header)?.client).toEqual({
        clientId: client.clientId,
        enterpriseId: e.id,
      });
      await deleteClient(ctx, e.id, client.clientId);
      expect(auth.verifiedHeader(header)).toBeUndefined();
    } finally {
      await close();
    }
  });
});

describe('changes made by another process', () => {
  // A second handle on the same database, as the CLI or another node has: its changes reach this
  // process only through the database (no clientChanges announcement).
  it('a deleted client or a changed secret is refused within the change stamp bound', async () => {
    const { ctx, close } = await testContext();
    const auth = new ClientCredentials(ctx);
    const otherDb = openDatabase(ctx.config);
    const other = createWorkflowContext({
      db: otherDb,
      config: ctx.config,
      log: pino({ level: 'silent' }),
    });
    const waitBound = () =>
      new Promise((resolve) => setTimeout(resolve, dialectOf(ctx.db).changeStampBoundMs + 1));
    const remember = async (username: string, password: string) => {
      const header = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
      const snapshot = auth.snapshot();
      const ok = await auth.authenticate(username, password);
      expect(ok).not.toBeNull();
      auth.rememberHeader(header, username, ok!, snapshot);
      expect(auth.verifiedHeader(header)).toBeDefined();
      return header;
    };
    try {
      const e = await createEnterprise(ctx, 'acme');
      const deleted = await createClient(ctx, e.id);
      const deletedHeader = await remember(deleted.username, deleted.password);
      await upsertClientWithSecret(ctx, e.id, 'rotated', 'first-secret');
      const rotatedHeader = await remember('rotated', 'first-secret');

      await deleteClient(other, e.id, deleted.clientId);
      await upsertClientWithSecret(other, e.id, 'rotated', 'second-secret');
      await waitBound();
      expect(auth.verifiedHeader(deletedHeader)).toBeUndefined();
      expect(await auth.authenticate(deleted.username, deleted.password)).toBeNull();
      expect(auth.verifiedHeader(rotatedHeader)).toBeUndefined();
      expect(await auth.authenticate('rotated', 'first-secret')).toBeNull();
      expect(await auth.authenticate('rotated', 'second-secret')).not.toBeNull();
    } finally {
      other.mailer.close();
      await otherDb.destroy();
      await close();
    }
  });
});
