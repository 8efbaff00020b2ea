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

  it.each(['a\u0001b', 'a\u0000', 'a\ufffeb', 'a\uffff', '\ud800'])(
    'refuses a string holding a character XML cannot carry: %j',
    (value) => {
      const e = errorOf(() => readParams(specs, { palId: value }, 'form field'));
      expect([e.statusCode, e.message]).toEqual([
        400,
        'form field palId: contains a character that XML cannot carry',
      ]);
    },
  );

  it('keeps tab, line breaks and every other character', () => {
    const value = 'a\tb\nc\rd é 😀 \u0085';
    expect(readParams(specs, { palId: value }, 'form field')).toEqual({ palId: value });
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

  it.each([
    ['summary', 'accepted'],
    ['full', 'accepted'],
    ['Summary', 'query parameter view: must be one of summary, full'],
    ['', 'query parameter view: must be one of summary, full'],
  ])('holds a string to its enum: %j', (value, want) => {
    const views = [
      { name: 'view', type: 'string', required: true, enum: ['summary', 'full'] },
    ] as const;
    if (want === 'accepted')
      expect(readParams(views, { view: value }, 'query parameter')).toEqual({ view: value });
    else {
      const e = errorOf(() => readParams(views, { view: value }, 'query parameter'));
      expect([e.statusCode, e.message]).toEqual([400, want]);
    }
  });

  describe('search headers are UTF-8 text', () => {
    const search = [{ name: 'name', type: 'string', required: false, maxLength: 10 }] as const;
    // Node hands a header's bytes over one character each (Latin-1): what curl's raw UTF-8 becomes.
    const asNodeReadsIt = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

    it.each([
      ['raw UTF-8 bytes', asNodeReadsIt('Müller'), 'Müller'],
      ['raw UTF-8 beyond Latin-1', asNodeReadsIt('Łukasz 李'), 'Łukasz 李'],
      ['RFC 8187', "UTF-8''M%C3%BCller", 'Müller'],
      ['RFC 8187 with a language, any case', "utf-8'de'%C5%81%c3%b3d%C5%BA", 'Łódź'],
      ['Latin-1 bytes that are not UTF-8 (a browser fetch)', 'M\u00fcller', 'Müller'],
      ['ASCII', 'plain', 'plain'],
      ["RFC 8187's ISO-8859-1 form", "ISO-8859-1''M%FCller", 'Müller'],
      ['a byte-order mark, kept as the character it is', "UTF-8''%EF%BB%BFabc", '\ufeffabc'],
    ])('%s', (_, raw, want) => {
      expect(readSearch(search, { name: raw }).name).toBe(want);
    });

    it.each([
      ["UTF-8''%C3", "the RFC 8187 value's %XX escapes are not UTF-8"],
      ["UTF-8''a b", 'may hold only'],
      ["UTF-8''%zz", 'may hold only'],
    ])('refuses a broken RFC 8187 value %j with a 400', (raw, want) => {
      const e = errorOf(() => readSearch(search, { name: raw }));
      expect(e.statusCode).toBe(400);
      expect(e.message).toContain(want);
    });

    it('counts maxLength in characters of the decoded text, not bytes or escapes', () => {
      expect(readSearch(search, { name: asNodeReadsIt('ü'.repeat(10)) }).name).toBe('ü'.repeat(10));
      expect(readSearch(search, { name: `UTF-8''${'%C3%BC'.repeat(10)}` }).name).toBe(
        'ü'.repeat(10),
      );
      expect(readSearch(search, { name: asNodeReadsIt('😀'.repeat(10)) }).name).toBe(
        '😀'.repeat(10),
      );
      expect(
        errorOf(() => readSearch(search, { name: asNodeReadsIt('ü'.repeat(11)) })).message,
      ).toBe('header name: must be at most 10 characters');
    });
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
