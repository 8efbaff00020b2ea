// Browser sessions end 30 minutes after their last request, 12 hours after they started however
// active, and at the first request after their person's standing is gone; a sweep removes the
// ended ones. The outcome a session keeps for its page is bounded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployManifest, manualClock, testContext } from '../../test/helpers.js';
import { deleteConsoleAccess, grantConsoleAccess } from './console-access.js';
import { createEnterprise } from './enterprises.js';
import {
  boundedOutcome,
  createSession,
  MORE_MESSAGES,
  OUTCOME_MESSAGE_LENGTH,
  OUTCOME_MESSAGES_MAX,
  readSession,
  saveOutcome,
  SESSION_IDLE_MS,
  SESSION_LIFETIME_MS,
  sweepSessions,
  type ActionOutcome,
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

describe('the outcome a session keeps', () => {
  const many = (n: number) => Array.from({ length: n }, (_, k) => ({ message: `m${k}` }));
  const outcome = (messages: ActionOutcome['messages']): ActionOutcome => ({
    action: 'enter',
    ran: true,
    success: true,
    messages,
  });

  it('is the first 100 messages, then a line saying how many more there were', () => {
    expect(OUTCOME_MESSAGES_MAX).toBe(100);
    const kept = boundedOutcome(outcome(many(180_000)));
    expect(kept.messages).toHaveLength(101);
    expect(kept.messages.slice(0, 100)).toEqual(many(100));
    expect(kept.messages[100]).toEqual({
      message: 'and 179,900 more messages',
      type: MORE_MESSAGES,
    });
    expect(boundedOutcome(outcome(many(101))).messages[100]!.message).toBe('and 1 more message');
  });

  it('keeps an outcome within the bounds as it is, the errors first among them', () => {
    const error = { message: 'amount: write the sum in CHF', type: 'INVALID_ARGUMENT' };
    const within = outcome([error, ...many(99)]);
    expect(boundedOutcome(within)).toBe(within);
    const over = boundedOutcome({ ...outcome([error, ...many(500)]), success: false });
    expect(over.messages[0]).toEqual(error);
    expect(over).toMatchObject({ action: 'enter', ran: true, success: false });
  });

  it('cuts a message past 2,000 characters, and a type past 100, saying so', () => {
    const [long] = boundedOutcome(
      outcome([{ message: 'x'.repeat(3_000_000), type: 'T'.repeat(1000) }]),
    ).messages;
    expect(long!.message).toBe(
      `${'x'.repeat(OUTCOME_MESSAGE_LENGTH)}… (cut to 2000 of 3000000 characters)`,
    );
    expect(long!.type).toBe('T'.repeat(100));
    // Never half of a character outside the BMP.
    const emoji = `${'x'.repeat(OUTCOME_MESSAGE_LENGTH - 1)}😀${'y'.repeat(10)}`;
    const [cut] = boundedOutcome(outcome([{ message: emoji }])).messages;
    expect(cut!.message.startsWith(`${'x'.repeat(OUTCOME_MESSAGE_LENGTH - 1)}…`)).toBe(true);
  });

  it('is stored bounded, by an entry and by an action alike', async () => {
    const started = await createSession(t.ctx, { ...start, outcome: outcome(many(5000)) });
    const read = async (cookie: string) => {
      const session = await readSession(t.ctx, cookie);
      return session.state === 'live' ? session.session.outcome?.messages : session.state;
    };
    expect(await read(started)).toHaveLength(101);
    await saveOutcome(t.ctx, started, { ...outcome(many(180_000)), action: 'press' });
    const messages = await read(started);
    expect(messages).toHaveLength(101);
    expect(messages!.at(-1)).toEqual({ message: 'and 179,900 more messages', type: MORE_MESSAGES });
  });
});
