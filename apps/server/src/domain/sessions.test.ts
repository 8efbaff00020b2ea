// Browser sessions end 30 minutes after their last request, and a sweep removes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock, testContext } from '../../test/helpers.js';
import { createEnterprise } from './enterprises.js';
import { createSession, readSession, SESSION_IDLE_MS, sweepSessions } from './sessions.js';

const clock = manualClock();
let t: Awaited<ReturnType<typeof testContext>>;
let enterpriseId: string;
beforeAll(async () => {
  t = await testContext({}, { now: clock.now });
  enterpriseId = (await createEnterprise(t.ctx, 'Sessions')).id;
});
afterAll(() => t?.close());

describe('browser sessions', () => {
  it('live while used, end after 30 minutes idle, and are swept', async () => {
    const cookie = await createSession(t.ctx, {
      enterpriseId,
      palId: 'p',
      transactionId: null,
      ssoId: null,
      role: null,
      outcome: null,
    });
    clock.advance(SESSION_IDLE_MS - 1000);
    expect((await readSession(t.ctx, cookie))?.palId).toBe('p'); // a request: idle time starts again
    clock.advance(SESSION_IDLE_MS - 1000);
    expect(await readSession(t.ctx, cookie)).toBeDefined();
    clock.advance(SESSION_IDLE_MS + 1);
    expect(await readSession(t.ctx, cookie)).toBeUndefined();
    expect(await sweepSessions(t.ctx)).toBe(1);
    expect(await readSession(t.ctx, 'not-a-cookie')).toBeUndefined();
    expect(await readSession(t.ctx, undefined)).toBeUndefined();
  });
});
