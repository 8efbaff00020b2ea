import { describe, expect, it } from 'vitest';
import { inParts, ROWS_PER_STATEMENT } from './inserted.js';

describe('inParts', () => {
  it('splits rows into runs of powers of two, longest first, each row once and in order', () => {
    for (const count of [0, 1, 2, 3, 7, 20, 511, 512, 513, 1000, 2049]) {
      const rows = Array.from({ length: count }, (_, i) => i);
      const parts = inParts(rows);
      expect(parts.flat()).toEqual(rows);
      for (const part of parts) {
        expect(part.length).toBeGreaterThan(0);
        expect(part.length).toBeLessThanOrEqual(ROWS_PER_STATEMENT);
        expect(Number.isInteger(Math.log2(part.length)), `${count}: ${part.length}`).toBe(true);
      }
      const lengths = parts.map((p) => p.length);
      expect(lengths).toEqual([...lengths].sort((a, b) => b - a));
    }
    expect(inParts(Array.from({ length: 20 })).map((p) => p.length)).toEqual([16, 4]);
    expect(inParts(Array.from({ length: 1000 })).map((p) => p.length)).toEqual([
      512, 256, 128, 64, 32, 8,
    ]);
  });
});
