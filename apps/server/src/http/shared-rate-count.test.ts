// The shared counts' batching (shared-rate-count.ts) over the library's own memory limiter, which
// counts as its PostgreSQL store does (test/rate-limits.int.test.ts runs the store itself, and
// its refusals from memory once a key is over).
import { RateLimiterMemory, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { describe, expect, it } from 'vitest';
import { BatchedConsumer } from './shared-rate-count.js';

const POINTS = 5;
const limiter = () => new RateLimiterMemory({ points: POINTS, duration: 60 });

describe('BatchedConsumer', () => {
  it('sends a lone request at once, and one at a time a key when requests come together', async () => {
    const consumer = new BatchedConsumer(limiter(), POINTS);
    expect((await consumer.consume('a')).remaining).toBe(4);
    expect(consumer.sent).toBe(1);
    // Eight at once: the first goes alone, the seven behind it in one batch of seven points.
    const burst = await Promise.all(Array.from({ length: 8 }, () => consumer.consume('a')));
    expect(consumer.sent).toBe(3);
    expect(burst.map((c) => c.remaining)).toEqual([3, 2, 1, 0, 0, 0, 0, 0]);
    expect(burst.map((c) => c.over)).toEqual([false, false, false, false, true, true, true, true]);
    for (const c of burst) expect(c.msBeforeNext).toBeGreaterThan(0);
    expect(consumer.busyKeys).toBe(0);
  });

  it('keeps keys apart: another key neither waits nor shares a batch', async () => {
    const consumer = new BatchedConsumer(limiter(), POINTS);
    const both = Promise.all([consumer.consume('a'), consumer.consume('b')]);
    // Both sent at once: b did not wait behind a's upsert.
    expect(consumer.sent).toBe(2);
    expect(consumer.busyKeys).toBe(2);
    const [a, b] = await both;
    expect([a.remaining, b.remaining]).toEqual([4, 4]);
    expect(consumer.busyKeys).toBe(0);
  });

  it('rejects each request of a batch whose store fails, and the next batch goes on', async () => {
    let failures = 2;
    const store = limiter();
    const flaky = {
      consume: (key: string, points: number) =>
        failures-- > 0 ? Promise.reject(new Error('store down')) : store.consume(key, points),
    } as unknown as RateLimiterAbstract;
    const consumer = new BatchedConsumer(flaky, POINTS);
    // The first alone, then the two behind it together: both upserts fail.
    const settled = await Promise.allSettled([1, 2, 3].map(() => consumer.consume('a')));
    expect(consumer.sent).toBe(2);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((await consumer.consume('a')).remaining).toBe(4);
  });

  it('rejects the requests of a store that throws instead of rejecting, and goes on', async () => {
    let throws = true;
    const store = limiter();
    const throwing = {
      consume: (key: string, points: number) => {
        if (throws) throw new Error('store broken');
        return store.consume(key, points);
      },
    } as unknown as RateLimiterAbstract;
    const consumer = new BatchedConsumer(throwing, POINTS);
    await expect(consumer.consume('a')).rejects.toThrow('store broken');
    expect(consumer.busyKeys).toBe(0);
    throws = false;
    expect((await consumer.consume('a')).remaining).toBe(4);
  });
});
