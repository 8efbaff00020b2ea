// Idempotency keys on the project's engine: one claim wins however many run at once, the same
// request gets the first answer, another request is refused, a claim whose request died is taken
// over after its lease, keys expire after 24 hours, and a server fault gives the key up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock, testContext, type TestContext } from '../../test/helpers.js';
import {
  claimIdempotencyKeyFor,
  idempotencyLeaseMs,
  IDEMPOTENCY_KEY_TTL_MS,
  releaseIdempotencyKeyFor,
  storeIdempotentAnswerFor,
  sweepIdempotencyKeys,
  type KeyClaim,
} from './idempotency.js';

const clock = manualClock();
let t: TestContext;
beforeAll(async () => {
  // The wait for another request's answer is WORKFLOW_TIMEOUT_MS + 2 s: keep it short here.
  t = await testContext({ WORKFLOW_TIMEOUT_MS: '10' }, { now: clock.now });
});
afterAll(() => t?.close());

const ANSWER = { status: 200, contentType: 'application/json; charset=utf-8', body: '"tx-1"' };

function claim(key: string, fingerprint = 'F', client = 'client-1'): Promise<KeyClaim> {
  return claimIdempotencyKeyFor(t.ctx, client, key, fingerprint);
}

function store(key: string, owner: string, answer = ANSWER): Promise<void> {
  return storeIdempotentAnswerFor(t.ctx, 'client-1', key, owner, answer);
}

async function owner(key: string, fingerprint = 'F', client = 'client-1'): Promise<string> {
  const claimed = await claim(key, fingerprint, client);
  if (claimed.kind !== 'claimed') throw new Error(`expected a claim, got ${claimed.kind}`);
  return claimed.owner;
}

describe('idempotency keys', () => {
  it('of 50 concurrent claims exactly one wins; the others get its answer', async () => {
    const claims = Array.from({ length: 50 }, () => claim('k-concurrent'));
    // The winner answers a moment later; the others wait for it.
    const first = await Promise.race(claims.map((c) => c.then((r) => r)));
    expect(first.kind).toBe('claimed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await store('k-concurrent', (first as { owner: string }).owner);
    const results = await Promise.all(claims);
    expect(results.filter((r) => r.kind === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'answered')).toHaveLength(49);
    for (const r of results) if (r.kind === 'answered') expect(r.answer).toEqual(ANSWER);
  });

  it('refuses the key for another request, and keeps keys apart per client', async () => {
    await store('k-other', await owner('k-other'));
    expect(await claim('k-other', 'G')).toEqual({ kind: 'mismatch' });
    expect((await claim('k-other', 'G', 'client-2')).kind).toBe('claimed');
  });

  it('answers 409 (busy) when the first request is still served after the wait', async () => {
    await owner('k-busy');
    const started = performance.now();
    expect(await claim('k-busy')).toEqual({ kind: 'busy', retryAfterSeconds: 1 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_000);
  });

  it('takes over a claim whose request died, once its lease ended (and not before)', async () => {
    const dead = await owner('k-lease');
    clock.advance(idempotencyLeaseMs(t.ctx.config) - 1);
    const stillBusy = claim('k-lease');
    clock.advance(1);
    const taken = await stillBusy; // the lease ended while it waited
    expect(taken.kind).toBe('claimed');
    // The dead request's answer, should it come after all, no longer counts.
    await store('k-lease', dead, { ...ANSWER, body: 'old' });
    expect((await claim('k-lease', 'other fingerprint')).kind).toBe('mismatch');
    await store('k-lease', (taken as { owner: string }).owner);
    expect(await claim('k-lease')).toEqual({ kind: 'answered', answer: ANSWER });
  });

  it('gives a key up after a server fault: the next request does the work', async () => {
    await releaseIdempotencyKeyFor(t.ctx, 'client-1', 'k-fault', await owner('k-fault'));
    expect((await claim('k-fault')).kind).toBe('claimed');
  });

  it('keeps keys 24 hours: then the same key is new, and the sweep removes it', async () => {
    await store('k-day', await owner('k-day'));
    clock.advance(IDEMPOTENCY_KEY_TTL_MS - 1);
    expect(await claim('k-day', 'another request')).toEqual({ kind: 'mismatch' });
    clock.advance(1);
    expect((await claim('k-day', 'another request')).kind).toBe('claimed');
    clock.advance(IDEMPOTENCY_KEY_TTL_MS);
    expect(await sweepIdempotencyKeys(t.ctx)).toBeGreaterThanOrEqual(1);
    const left = await t.ctx.db
      .selectFrom('idempotency_keys')
      .select('idempotency_key')
      .where('idempotency_key', '=', 'k-day')
      .execute();
    expect(left).toEqual([]);
  });
});
