import { describe, expect, it } from 'vitest';
import { deepFreeze, isImmutable } from '../index.js';

describe('deepFreeze', () => {
  it('marks plain objects and arrays all the way down, and nothing whose contents can change', () => {
    const plain = deepFreeze({ a: [{ b: 'c' }], d: null, e: 1 });
    expect(isImmutable(plain)).toBe(true);
    expect(isImmutable(plain.a)).toBe(true);
    expect(isImmutable(plain.a[0]!)).toBe(true);
    expect(() => plain.a.push({ b: 'd' })).toThrow(TypeError);
    const dated = deepFreeze({ at: new Date(0), list: [1] });
    expect(isImmutable(dated)).toBe(false);
    expect(isImmutable(dated.list)).toBe(true);
    expect(Object.isFrozen(dated)).toBe(true);
    expect(isImmutable(deepFreeze({ map: new Map() }))).toBe(false);
    expect(isImmutable({ unfrozen: true })).toBe(false);
  });
});
