// Browser sessions end 30 minutes after their last request, 12 hours after they started however
// active, and at the first request after their person's standing is gone; a sweep removes the
// ended ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployManifest, manualClock, testContext } from '../../test/helpers.js';
import { deleteConsoleAccess, grantConsoleAccess } from './console-access.js';
import { createEnterprise } from './enterprises.js';
import {
  createSession,
  readSession,
  SESSION_IDLE_MS,
  SESSION_LIFETIME_MS,
  sweepSessions,
  type SessionStart,
} from './sessions.js';
import { WITHDRAWN } from './session-standing.js';
import { createSso } from './ssos.js';

const clock = manualClock();
let t: Awaited<ReturnType<typeof testContext>>;
let start: SessionStart;
beforeAll(async () => {
  t = await testContext({}, { now: clock.now });
  const enterpriseId = (await createEnterprise(t.ctx, 'Sessions')).id;
  await deployManifest(t.ctx, enterpriseId, { id: 'p', modes: { console: true } });
  const sso = await createSso(t.ctx, enterpriseId, {
    firstName: 'Sue',
    lastName: 'Session',
    email: 'sue@example.com',
  });
  await grantConsoleAccess(t.ctx, enterpriseId, 'p', sso, false);
  start = {
    kind: 'console',
    enterpriseId,
    palId: 'p',
    transactionId: null,
    standingSso: sso,
    role: null,
    profile: 'personal',
    outcome: null,
  };
});
afterAll(() => t?.close());

const palOf = async (cookie: string | undefined) => {
  const read = await readSession(t.ctx, cookie);
  return read.state === 'live' ? read.session.palId : read.state;
};

describe('browser sessions', () => {
  it('live while used, end after 30 minutes idle, and are swept', async () => {
    const cookie = await createSession(t.ctx, start);
    clock.advance(SESSION_IDLE_MS - 1000);
    expect(await palOf(cookie)).toBe('p'); // a request: idle time starts again
    clock.advance(SESSION_IDLE_MS - 1000);
    expect(await palOf(cookie)).toBe('p');
    clock.advance(SESSION_IDLE_MS + 1);
    expect(await palOf(cookie)).toBe('none');
    expect(await sweepSessions(t.ctx)).toBe(1);
    expect(await palOf('not-a-cookie')).toBe('none');
    expect(await palOf(undefined)).toBe('none');
  });

  it('end 12 hours after they started, however active, and are swept', async () => {
    const cookie = await createSession(t.ctx, start);
    // Used every 15 minutes (never idle) until 12 hours after the start.
    const step = SESSION_IDLE_MS / 2;
    for (let at = 0; at < SESSION_LIFETIME_MS; at += step) {
      expect(await palOf(cookie)).toBe('p');
      clock.advance(step);
    }
    expect(await palOf(cookie)).toBe('none');
    expect(await sweepSessions(t.ctx)).toBe(1);
  });

  it('end at the first request after the console grant they rest on is removed', async () => {
    const cookie = await createSession(t.ctx, start);
    expect(await palOf(cookie)).toBe('p');
    await deleteConsoleAccess(t.ctx, start.enterpriseId, 'p', start.standingSso, false);
    expect(await readSession(t.ctx, cookie)).toEqual({
      state: 'withdrawn',
      reason: WITHDRAWN.grant,
    });
    // Ended for good: granted again, the old cookie stays ended.
    await grantConsoleAccess(t.ctx, start.enterpriseId, 'p', start.standingSso, false);
    expect(await palOf(cookie)).toBe('none');
    // A session under the other profile never stood on that grant.
    const enterprise = await createSession(t.ctx, { ...start, profile: 'enterprise' });
    expect(await palOf(enterprise)).toBe('withdrawn');
  });
});
