// The in-memory rate-limit windows (SQLite's counts): fixed windows that start with a key's first
// request, as rate-limiter-flexible's memory limiter counts them, and ended windows swept.
import { describe, expect, it } from 'vitest';
import { MemoryWindows } from './rate-limits.js';

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
