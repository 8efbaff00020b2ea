import { describe, expect, it } from 'vitest';
import { coerce, readParams, readSearch } from '../index.js';

const errorOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as { statusCode: number; message: string };
  }
  throw new Error('expected an error');
};

describe('coerce', () => {
  it.each([
    ['boolean', 'true', true],
    ['boolean', 'FALSE', false],
    ['boolean', '1', true],
    ['int', '42', 42],
    ['int', '-2147483648', -2147483648],
    ['string', ' keep ', ' keep '],
  ] as const)('%s %j → %j', (type, raw, want) => {
    expect(coerce(type, raw, 'x')).toBe(want);
  });

  it.each([
    ['boolean', 'maybe'],
    ['int', 'abc'],
    ['int', '1.5'],
    ['int', '2147483648'],
    ['int', ''],
  ] as const)('refuses %s %j with a 400 naming the parameter', (type, raw) => {
    const e = errorOf(() => coerce(type, raw, 'header startRecord'));
    expect(e.statusCode).toBe(400);
    expect(e.message).toMatch(/^header startRecord: expected/);
  });
});

describe('readParams and readSearch', () => {
  const specs = [
    { name: 'palId', type: 'string', required: true },
    { name: 'useEnterpriseProfile', type: 'boolean', required: false },
  ] as const;

  it('reads declared parameters, ignores others, and refuses missing and repeated ones', () => {
    expect(
      readParams(specs, { palId: 'p', useEnterpriseProfile: 'true', other: 'x' }, 'form field'),
    ).toEqual({
      palId: 'p',
      useEnterpriseProfile: true,
    });
    expect(errorOf(() => readParams(specs, {}, 'form field')).message).toBe(
      'form field palId: required',
    );
    expect(errorOf(() => readParams(specs, { palId: ['a', 'b'] }, 'form field')).message).toBe(
      'form field palId: given more than once',
    );
  });

  it.each([
    ['x'.repeat(200), 'accepted'],
    ['x'.repeat(201), 'path parameter id: must be at most 200 characters'],
    ['x'.repeat(5000), 'path parameter id: must be at most 200 characters'],
  ])('holds a string to its maxLength: %#', (value, want) => {
    const limited = [{ name: 'id', type: 'string', required: true, maxLength: 200 }] as const;
    if (want === 'accepted')
      expect(readParams(limited, { id: value }, 'path parameter')).toEqual({ id: value });
    else {
      const e = errorOf(() => readParams(limited, { id: value }, 'path parameter'));
      expect([e.statusCode, e.message]).toEqual([400, want]);
    }
  });

  it('defaults absent booleans to false and startRecord to 0, matching header names case-insensitively', () => {
    const search = [
      { name: 'name', type: 'string', required: false },
      { name: 'exactName', type: 'boolean', required: false },
      { name: 'startRecord', type: 'int', required: false },
    ] as const;
    expect(readSearch(search, { name: 'x' })).toEqual({
      name: 'x',
      exactName: false,
      startRecord: 0,
    });
    expect(readSearch(search, { exactname: 'true', startrecord: '5' })).toEqual({
      exactName: true,
      startRecord: 5,
    });
    expect(errorOf(() => readSearch(search, { startrecord: '-1' })).statusCode).toBe(400);
  });
});
