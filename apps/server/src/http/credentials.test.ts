// The credential cache and the failed sign-in throttle, on a real database.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, testContext, type TestContext } from '../../test/helpers.js';
import { createClient, deleteClient } from '../domain/clients.js';
import { createEnterprise } from '../domain/enterprises.js';
import { ClientCredentials } from './credentials.js';
import { AUTH_THROTTLE, throttleKey } from './sign-in-throttle.js';

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
    const key = throttleKey(client.username, '10.0.0.1');
    for (let i = 0; i < AUTH_THROTTLE.maxFailures - 1; i++) {
      expect(await auth.authenticate(client.username, 'wrong', '10.0.0.1')).toBeNull();
    }
    expect(auth.throttle.isThrottled(key)).toBe(0);
    await auth.authenticate(client.username, 'wrong', '10.0.0.1');
    expect(auth.throttle.isThrottled(key)).toBe(AUTH_THROTTLE.windowSeconds);
    // Other addresses and other usernames are not affected.
    expect(auth.throttle.isThrottled(throttleKey(client.username, '10.0.0.2'))).toBe(0);
    expect(auth.throttle.isThrottled(throttleKey('someone-else', '10.0.0.1'))).toBe(0);

    clock.advance(100_000);
    expect(auth.throttle.isThrottled(key)).toBe(AUTH_THROTTLE.windowSeconds - 100);
    clock.advance(AUTH_THROTTLE.windowSeconds * 1000);
    expect(auth.throttle.isThrottled(key)).toBe(0);
  });

  it('a success clears the failures of its pair', async () => {
    const client = await createClient(t.ctx, enterpriseId);
    const key = throttleKey(client.username, '::1');
    for (let i = 0; i < AUTH_THROTTLE.maxFailures - 1; i++) auth.throttle.recordFailure(key);
    expect(await auth.authenticate(client.username, client.password, '::1')).not.toBeNull();
    auth.throttle.recordFailure(key);
    expect(auth.throttle.isThrottled(key)).toBe(0);
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
      const ok = await auth.authenticate(client.username, client.password);
      auth.rememberHeader(header, client.username, ok!);
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
