// Ids and tokens drawn from a pool of random bytes: each byte is handed out once.
import { describe, expect, it } from 'vitest';
import { looksLikeToken, newToken, randomId } from './ids.js';

describe('random ids and tokens', () => {
  it('never repeats one, across many refills of the pool, mixed with tokens', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = randomId();
      expect(id).toMatch(/^[\w-]{22}$/);
      seen.add(id);
      if (i % 3 === 0) {
        const token = newToken();
        expect(looksLikeToken(token)).toBe(true);
        seen.add(token.slice(0, 22));
        seen.add(token.slice(22));
      }
    }
    // The ids and each token's two halves: bytes of the pool handed out twice would repeat one.
    expect(seen.size).toBe(20_000 + 2 * Math.ceil(20_000 / 3));
  });

  it('gives ids of other lengths, larger than the pool too', () => {
    expect(randomId(9)).toMatch(/^[\w-]{12}$/);
    const big = randomId(10_000);
    expect(Buffer.from(big, 'base64url')).toHaveLength(10_000);
    expect(randomId(10_000)).not.toBe(big);
    for (const bytes of [0, -1, 1.5, Number.NaN])
      expect(() => randomId(bytes)).toThrow('not a byte count');
  });
});
