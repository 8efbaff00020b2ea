import { describe, expect, it } from 'vitest';
import { DecodeError } from './decode-error.js';
import { decodeJson, encodeJson, schemaOf, validateRoot } from './json-codec.js';
import { zStringMap } from '../generated/schemas.gen.js';

const issuesOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof DecodeError) return e.issues;
    throw e;
  }
  throw new Error('expected a DecodeError');
};

const PAL = {
  id: 'expense',
  deployed: true,
  modeTransaction: true,
  modeConsole: false,
  modeWeb: false,
  shadow: false,
  shell: false,
};

describe('decodeJson', () => {
  it.each([
    { root: 'palInfo', text: JSON.stringify(PAL), want: PAL },
    { root: 'palInfoList', text: JSON.stringify([PAL, PAL]), want: [PAL, PAL] },
    { root: 'nameValue', text: '{"name":"a"}', want: { name: 'a' } },
    { root: 'string', text: '"text"', want: 'text' },
    { root: 'boolean', text: 'false', want: false },
    { root: 'int', text: '-7', want: -7 },
  ] as const)('reads $root', ({ root, text, want }) => {
    expect(decodeJson(root, text)).toEqual(want);
  });

  it.each([
    { root: 'palInfo', text: '{"id":', want: /^ malformed JSON: / },
    { root: 'palInfo', text: JSON.stringify({ ...PAL, colour: 'red' }), want: /colour/ },
    { root: 'palInfo', text: JSON.stringify({ ...PAL, deployed: 'yes' }), want: /boolean/ },
    { root: 'int', text: '1.5', want: /int/ },
    { root: 'int', text: '2147483648', want: /.+/ },
    { root: 'string', text: '"bell\\u0007"', want: /.+/ },
  ] as const)('refuses $text as $root with a DecodeError', ({ root, text, want }) => {
    const issues = issuesOf(() => decodeJson(root, text));
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.map((i) => `${i.path} ${i.message}`).join('\n')).toMatch(want);
  });

  it('names the path of every problem, from the root element', () => {
    const issues = issuesOf(() =>
      decodeJson('palInfoList', JSON.stringify([PAL, { ...PAL, shell: 1 }])),
    );
    expect(issues.map((i) => i.path)).toEqual(['palInfoList[1].shell']);
  });

  it('says "required" of a member left out, small body or large; a wrong value keeps its reason', () => {
    const { shell: _left, ...withoutShell } = PAL;
    expect(issuesOf(() => decodeJson('palInfoList', JSON.stringify([PAL, withoutShell])))).toEqual([
      { path: 'palInfoList[1].shell', message: 'required' },
    ]);
    // Past LARGE_BODY_CHARS the value is walked for its first problems: the same words.
    const many = Array.from({ length: 400 }, () => PAL);
    expect(
      issuesOf(() => decodeJson('palInfoList', JSON.stringify([...many, withoutShell]))),
    ).toEqual([{ path: 'palInfoList[400].shell', message: 'required' }]);
    const [wrong] = issuesOf(() =>
      decodeJson('palInfoList', JSON.stringify([{ ...PAL, shell: null }])),
    );
    expect(wrong!.message).toMatch(/expected boolean/);
  });

  it('refuses the map key __proto__, as XML does, however it is spelt; other names are data', () => {
    const response = (bindings: string) =>
      `{"success":true,"currentPage":1,"totalPages":1,"listBindings":${bindings}}`;
    for (const key of ['"__proto__"', '"\\u005f_proto__"', '"__pr\\u006fto__"']) {
      const issues = issuesOf(() =>
        decodeJson('ServiceResponse', response(`{${key}:"1","b":"2"}`)),
      );
      expect(issues).toEqual([
        { path: 'ServiceResponse.listBindings', message: 'the map key "__proto__" is reserved' },
      ]);
    }
    expect(decodeJson('ServiceResponse', response('{"constructor":"2","x__proto__":"3"}'))).toEqual(
      {
        success: true,
        currentPage: 1,
        totalPages: 1,
        listBindings: { constructor: '2', x__proto__: '3' },
      },
    );
  });

  it('refuses a map key with a character XML cannot carry, as XML does, in any size of body', () => {
    const request = (data: string) =>
      `{"payload":{"data":${data},"dataMaps":{"d":{"name":"d","entries":{"e\\u0000":"1"}}},"dataLists":{}},"sizeLimit":0,"listLimit":0,"paging":false,"pageSize":0,"page":0,"debug":false}`;
    const words = 'the key contains a character that XML cannot carry';
    expect(issuesOf(() => decodeJson('ServiceRequest', request('{"a\\u0001":"x"}')))).toEqual([
      { path: 'ServiceRequest.payload.data.a\u0001', message: words },
      { path: 'ServiceRequest.payload.dataMaps.d.entries.e\u0000', message: words },
    ]);
    // Past LARGE_BODY_CHARS the value is walked for its first problems: the same words.
    const filler = Array.from({ length: 4000 }, (_, i) => `"k${i}":"v"`).join(',');
    expect(
      issuesOf(() => decodeJson('ServiceRequest', request(`{${filler},"a\\u0001":"x"}`))),
    ).toEqual([
      { path: 'ServiceRequest.payload.data.a\u0001', message: words },
      { path: 'ServiceRequest.payload.dataMaps.d.entries.e\u0000', message: words },
    ]);
    expect(zStringMap.safeParse({ 'tab\there é 😀': 'x' }).success).toBe(true);
  });

  it('refuses a member given twice in one object, as XML does, however its name is spelt', () => {
    const request = (data: string, extra = '') =>
      `{"payload":{"data":${data},"dataMaps":{},"dataLists":{}},"sizeLimit":0,"listLimit":0,"paging":false,"pageSize":0,"page":0,"debug":false${extra}}`;
    expect(
      issuesOf(() => decodeJson('ServiceRequest', request('{"q":"x","\\u0071":"y"}'))),
    ).toEqual([
      { path: 'ServiceRequest.payload.data', message: 'member "q" given more than once' },
    ]);
    expect(issuesOf(() => decodeJson('ServiceRequest', request('{}', ',"page":1')))).toEqual([
      { path: 'ServiceRequest', message: 'member "page" given more than once' },
    ]);
    expect(
      issuesOf(() => decodeJson('nameValueList', '[{"name":"a","value":"1","value":"2"}]')),
    ).toEqual([{ path: 'nameValueList[0]', message: 'member "value" given more than once' }]);
    // The same name in different objects, and colons inside strings, are no repeat.
    expect(
      decodeJson('nameValueList', '[{"name":"a:b","value":"\\":"},{"name":"a","value":":"}]'),
    ).toEqual([
      { name: 'a:b', value: '":' },
      { name: 'a', value: ':' },
    ]);
  });

  it('names a repeat even deeper than jsonc-parser reaches', () => {
    const depth = 50_000;
    const text = `${'{"a":'.repeat(depth)}{"b":1,"b":2}${'}'.repeat(depth)}`;
    expect(issuesOf(() => decodeJson('string', text))).toEqual([
      { path: 'string', message: 'a member is given more than once' },
    ]);
  });

  it('walks a deeply nested body that spells __proto__ without running out of stack', () => {
    const depth = 100_000;
    const text = `${'['.repeat(depth)}"__proto__"${']'.repeat(depth)}`;
    expect(issuesOf(() => decodeJson('string', text)).length).toBeGreaterThan(0);
  });
});

describe('validateRoot, encodeJson and schemaOf', () => {
  it('validates a parsed value as decodeJson does', () => {
    expect(validateRoot('nameValue', { name: 'n', value: 'v' })).toEqual({ name: 'n', value: 'v' });
    expect(issuesOf(() => validateRoot('nameValue', { name: 1 }))[0]!.path).toBe('nameValue.name');
  });

  it('writes JSON that reads back to the same value', () => {
    const text = encodeJson('palInfo', PAL);
    expect(JSON.parse(text)).toEqual(PAL);
    expect(decodeJson('palInfo', text)).toEqual(PAL);
  });

  it('finds a generated schema by type name and a built-in by xs: name', () => {
    expect(schemaOf('NameValue').safeParse({ name: 'x' }).success).toBe(true);
    expect(schemaOf('NameValue').safeParse({ other: 'x' }).success).toBe(false);
    expect(schemaOf('xs:int').safeParse(3).success).toBe(true);
    expect(schemaOf('xs:int').safeParse('3').success).toBe(false);
  });
});
