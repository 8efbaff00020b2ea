import { describe, expect, it } from 'vitest';
import { nextAttemptAt, retryDelayMs } from './backoff.js';

const config = { retryBaseMs: 5000, retryMaxMs: 3_600_000, retryWindowMs: 72 * 3_600_000 };

describe('retry backoff', () => {
  it('doubles from the base up to the cap, each wait between half and all of its ceiling', () => {
    const ceilings = [5000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000];
    ceilings.forEach((ceiling, i) => {
      expect(retryDelayMs(config, i + 1, () => 0)).toBe(ceiling / 2);
      expect(retryDelayMs(config, i + 1, () => 1)).toBe(ceiling);
    });
    expect(retryDelayMs(config, 30, () => 1)).toBe(3_600_000);
    expect(retryDelayMs(config, 1000, () => 0)).toBe(1_800_000);
  });

  it('keeps retrying for the whole window (at least 24 hours by default), then gives up', () => {
    const start = new Date('2025-01-01T00:00:00Z');
    let now = start;
    let attempts = 1;
    // The longest waits: the window is what ends the retries, not a count.
    for (;;) {
      const at = nextAttemptAt(config, attempts, start, now, () => 1);
      if (!at) break;
      now = at;
      attempts += 1;
    }
    const spanHours = (now.getTime() - start.getTime()) / 3_600_000;
    expect(spanHours).toBeGreaterThan(71);
    expect(spanHours).toBeLessThanOrEqual(72);
    // And with the shortest waits, more attempts over the same window.
    let shortNow = start;
    let shortAttempts = 1;
    while (nextAttemptAt(config, shortAttempts, start, shortNow, () => 0)) {
      shortNow = nextAttemptAt(config, shortAttempts, start, shortNow, () => 0)!;
      shortAttempts += 1;
    }
    expect(shortAttempts).toBeGreaterThan(attempts);
    expect((shortNow.getTime() - start.getTime()) / 3_600_000).toBeGreaterThan(71);
  });
});
