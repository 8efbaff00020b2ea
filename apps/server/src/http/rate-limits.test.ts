// The in-memory rate-limit windows (SQLite's counts): fixed windows that start with a key's first
// request, as rate-limiter-flexible's memory limiter counts them, and ended windows swept.
import { describe, expect, it } from 'vitest';
import { openRateCountPool } from '../storage/rate-counts.js';
import { MemoryWindows, RateLimits } from './rate-limits.js';

describe('MemoryWindows', () => {
  it('counts a key down in its window, over past its points, afresh once the window ends', () => {
    let now = 1_000_000;
    const windows = new MemoryWindows(2, 60_000, () => now);
    expect(windows.count('a')).toEqual({ remaining: 1, msBeforeNext: 60_000, over: false });
    now += 10_000;
    expect(windows.count('a')).toEqual({ remaining: 0, msBeforeNext: 50_000, over: false });
    expect(windows.count('b')).toEqual({ remaining: 1, msBeforeNext: 60_000, over: false });
    expect(windows.count('a')).toEqual({ remaining: 0, msBeforeNext: 50_000, over: true });
    now += 50_000; // a's window has ended
    expect(windows.count('a')).toEqual({ remaining: 1, msBeforeNext: 60_000, over: false });
  });

  it('forgets keys whose windows ended', () => {
    let now = 0;
    const windows = new MemoryWindows(5, 1_000, () => now);
    for (let i = 0; i < 100; i++) windows.count(`address-${i}`);
    expect(windows.size).toBe(100);
    now = 1_000;
    windows.count('later');
    expect(windows.size).toBe(1);
  });
});

describe('RateLimits on a PostgreSQL that cannot be reached', () => {
  it('counts in memory meanwhile, a batch of requests as its many points', async () => {
    // Port 1 refuses connections: each upsert fails, and the library's memory limiter answers.
    const pool = openRateCountPool({
      kind: 'postgres',
      url: 'postgres://nobody@127.0.0.1:1/none',
      poolSize: 2,
    });
    const limits = new RateLimits(
      { clientRequests: 5, addressRequests: 5, windowSeconds: 60 },
      pool,
    );
    try {
      const shared = limits.shared!.client;
      const counted = await Promise.all(Array.from({ length: 6 }, () => shared.consume('k')));
      expect(shared.sent).toBe(2);
      expect(counted.map((c) => [c.remaining, c.over])).toEqual([
        [4, false],
        [3, false],
        [2, false],
        [1, false],
        [0, false],
        [0, true],
      ]);
      expect(shared.busyKeys).toBe(0);
    } finally {
      await limits.close();
    }
  });
});
