import { afterAll, describe, expect, it } from 'vitest';
import { SchemaValidator } from '@pal-workflow/test-support';
import { DecodeError, decodeJson, decodeXml, encodeXml } from '../index.js';

const validator = new SchemaValidator();
afterAll(() => validator.dispose());

function issuesOf(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (e instanceof DecodeError) return e.issues.map((i) => `${i.path}: ${i.message}`);
    throw e;
  }
  throw new Error('expected a DecodeError');
}

const PAL = 'xmlns:pal="urn:pal-workflow:pal"';

describe('encodeXml', () => {
  it('puts the root in its namespace and leaves members unqualified, in schema order', () => {
    const xml = encodeXml('palInfo', {
      shell: false,
      deployed: true,
      id: 'p1',
      modeTransaction: true,
      modeConsole: false,
      modeWeb: false,
      shadow: false,
    });
    expect(xml).toBe(
      `<?xml version="1.0" encoding="UTF-8"?>\n<pal:palInfo ${PAL}><id>p1</id><deployed>true</deployed><modeTransaction>true</modeTransaction><modeConsole>false</modeConsole><modeWeb>false</modeWeb><shadow>false</shadow><shell>false</shell></pal:palInfo>`,
    );
    validator.assertValid(xml);
  });

  it('repeats list members without a wrapper and writes xsi:nil with a value', () => {
    const xml = encodeXml('errorResult', {
      success: false,
      messages: [
        { message: 'a', type: 'NOT_FOUND' },
        { message: 'b', type: null },
      ],
    });
    expect(xml).toContain(
      '<messages><message>a</message><type>NOT_FOUND</type></messages><messages><message>b</message><type xsi:nil="true"/></messages>',
    );
    expect(xml).toContain('xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"');
    validator.assertValid(xml);
  });

  it('writes list responses as a wrapper of unqualified items', () => {
    const xml = encodeXml('nameValueList', [{ name: 'a', value: '1' }, { name: 'b' }]);
    expect(xml).toContain(
      `<pal:nameValueList ${PAL}><nameValue><name>a</name><value>1</value></nameValue><nameValue><name>b</name></nameValue></pal:nameValueList>`,
    );
    validator.assertValid(xml);
  });

  it('writes maps as entry elements and the user service root in its namespace', () => {
    const xml = encodeXml('ServiceResponse', {
      success: true,
      currentPage: 1,
      totalPages: 1,
      listBindings: { k: 'v' },
      payload: {
        data: { a: '1' },
        dataMaps: { m: { name: 'm', entries: { x: 'y' } } },
        dataLists: { l: { name: 'l', columns: ['c'], rows: [['r1'], []] } },
      },
    });
    expect(xml).toContain('<svc:ServiceResponse xmlns:svc="urn:pal-workflow:services">');
    expect(xml).toContain(
      '<listBindings><entry><key>k</key><value>v</value></entry></listBindings>',
    );
    expect(xml).toContain('<rows><item>r1</item></rows><rows></rows>');
    validator.assertValid(xml);
  });

  it('escapes markup and keeps carriage returns', () => {
    const xml = encodeXml('string', 'a<b>&c\r\n');
    expect(xml).toContain('a&lt;b&gt;&amp;c&#13;\n');
    expect(decodeXml(xml, 'string')).toBe('a<b>&c\r\n');
  });

  it('writes a character XML cannot carry as U+FFFD, so that the answer stays well-formed', () => {
    const text = 'a\u0001b\u0000c\ufffed\uffffe\ud800f\udc00g\tTab\nLF 😀 \u0085';
    const xml = encodeXml('string', text);
    validator.assertValid(xml);
    expect(decodeXml(xml, 'string')).toBe(
      'a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\ufffdg\tTab\nLF 😀 \u0085',
    );
    const map = encodeXml('ServiceResponse', {
      success: true,
      currentPage: 1,
      totalPages: 1,
      listBindings: { 'k\u0002': 'v\ufffe' },
    });
    validator.assertValid(map);
    expect(map).toContain('<key>k\ufffd</key>');
  });
});

describe('decodeXml', () => {
  it('reads a document with any prefix for the root namespace', () => {
    const value = decodeXml(
      `<x:nameValue xmlns:x="urn:pal-workflow:pal"><name>n</name><value> v </value></x:nameValue>`,
      'nameValue',
    );
    expect(value).toEqual({ name: 'n', value: ' v ' });
  });

  it('refuses a DOCTYPE before reading anything', () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><pal:nameValue ${PAL}><name>&e;</name></pal:nameValue>`;
    expect(issuesOf(() => decodeXml(xxe, 'nameValue'))).toEqual([': a DOCTYPE is not allowed']);
  });

  it('refuses text outside the root element, after an empty-element root too', () => {
    for (const xml of [
      `<pal:consoleContent ${PAL}/>junk`,
      `<pal:consoleContent ${PAL}/><!-- a comment -->junk`,
      `<pal:consoleContent ${PAL}></pal:consoleContent>junk`,
      `<pal:consoleContent ${PAL}/>junk>`,
      `<pal:consoleContent ${PAL}/>"junk">`,
      `<pal:consoleContent ${PAL}/><![CDATA[junk]]>`,
      `<pal:consoleContent ${PAL}/><![CDATA[junk]]>\n<!-- after -->`,
    ])
      expect(issuesOf(() => decodeXml(xml, 'consoleContent')).length, xml).toBe(1);
    for (const xml of [
      `<?xml version="1.0"?>\n<pal:consoleContent ${PAL}/>\r\n\t `,
      `<pal:consoleContent ${PAL}/><!-- after --><?pi x?>\n`,
      `<pal:consoleContent ${PAL}/><?pi a <?b?>`,
      `<pal:consoleContent ${PAL} xmlns:o="urn:a>b"/>`,
      `<pal:consoleContent ${PAL}><postData><name>a</name><value>b></value></postData></pal:consoleContent>`,
    ])
      expect(() => decodeXml(xml, 'consoleContent'), xml).not.toThrow();
  });

  it('names the path and the reason of every problem', () => {
    const xml = `<pal:consoleContent ${PAL}>
      <postData><name>a</name><colour>red</colour></postData>
      <documents><fields><x>1</x><y>two</y><width>1</width><height>1</height><page>1</page><palDefined>maybe</palDefined></fields></documents>
    </pal:consoleContent>`;
    expect(issuesOf(() => decodeXml(xml, 'consoleContent'))).toEqual([
      'consoleContent.postData[0].colour: unknown member',
      'consoleContent.documents[0].fields[0].y: expected an integer, got "two"',
      'consoleContent.documents[0].fields[0].palDefined: expected a boolean (true or false), got "maybe"',
    ]);
  });

  it('reports missing required members and enum violations through zod, with paths', () => {
    const xml = `<pal:consoleContent ${PAL}><documents><fields><type>BUTTON</type><x>1</x><y>1</y><width>1</width><height>1</height><page>1</page></fields></documents></pal:consoleContent>`;
    const issues = issuesOf(() => decodeXml(xml, 'consoleContent'));
    expect(issues.some((i) => i.startsWith('consoleContent.documents[0].fields[0].type:'))).toBe(
      true,
    );
    expect(
      issues.some((i) => i.startsWith('consoleContent.documents[0].fields[0].palDefined:')),
    ).toBe(true);
  });

  it('refuses the wrong root, the wrong namespace, qualified members and repeated single members', () => {
    expect(issuesOf(() => decodeXml(`<pal:palInfo ${PAL}/>`, 'nameValue'))[0]).toContain(
      'unexpected root element <pal:palInfo>',
    );
    expect(issuesOf(() => decodeXml(`<nameValue xmlns="urn:other"/>`, 'nameValue'))[0]).toContain(
      'must be in namespace urn:pal-workflow:pal',
    );
    expect(
      issuesOf(() =>
        decodeXml(`<pal:nameValue ${PAL}><pal:name>a</pal:name></pal:nameValue>`, 'nameValue'),
      )[0],
    ).toContain('unqualified');
    expect(
      issuesOf(() =>
        decodeXml(
          `<pal:nameValue ${PAL}><name>a</name><name>b</name></pal:nameValue>`,
          'nameValue',
        ),
      ),
    ).toEqual(['nameValue.name: must occur at most once, found 2']);
  });

  it('refuses members put in a namespace by a default xmlns, as an XSD validator does', () => {
    const ns = 'urn:pal-workflow:pal';
    // The root's default namespace is its unprefixed members' too.
    expect(
      issuesOf(() => decodeXml(`<nameValue xmlns="${ns}"><name>a</name></nameValue>`, 'nameValue')),
    ).toEqual([
      `nameValue.name: members are unqualified: <name> is in the namespace ${ns} (a default xmlns); declare the root's namespace with a prefix, or xmlns="" on the member`,
    ]);
    expect(
      issuesOf(() =>
        decodeXml(
          `<pal:consoleContent ${PAL}><postData xmlns="urn:x"><name>a</name></postData></pal:consoleContent>`,
          'consoleContent',
        ),
      )[0],
    ).toContain('consoleContent.postData: members are unqualified');
    // A root in a default namespace whose members say they are in none, and an empty root, pass.
    expect(
      decodeXml(`<nameValue xmlns="${ns}"><name xmlns="">a</name></nameValue>`, 'nameValue'),
    ).toEqual({ name: 'a' });
    expect(decodeXml(`<consoleContent xmlns="${ns}"/>`, 'consoleContent')).toEqual({});
  });

  it('accepts xsi:nil only where the schema allows it', () => {
    const nil = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
    expect(
      decodeXml(
        `<pal:errorResult ${PAL} ${nil}><success>false</success><messages><message>m</message><type xsi:nil="true"/></messages></pal:errorResult>`,
        'errorResult',
      ),
    ).toEqual({ success: false, messages: [{ message: 'm', type: null }] });
    expect(
      issuesOf(() =>
        decodeXml(
          `<pal:nameValue ${PAL} ${nil}><name xsi:nil="true"/></pal:nameValue>`,
          'nameValue',
        ),
      ),
    ).toEqual(['nameValue.name: is not nillable']);
  });

  it('reports malformed XML with its position', () => {
    expect(
      issuesOf(() =>
        decodeXml(`<pal:nameValue ${PAL}><name>a</nam></pal:nameValue>`, 'nameValue'),
      )[0],
    ).toMatch(/^: malformed XML at line 1/);
  });

  it("names the elements a document leaves open, not the parser's list of them", () => {
    expect(
      issuesOf(() => decodeXml(`<pal:nameValue ${PAL}><name>a</name><value>`, 'nameValue')),
    ).toEqual([': malformed XML: the document ends with <pal:nameValue>, <value> still open']);
  });
});

describe('decodeJson', () => {
  it('refuses unknown members, wrong types and characters XML cannot carry, with paths', () => {
    const issues = issuesOf(() =>
      decodeJson(
        'consoleContent',
        JSON.stringify({ postData: [{ name: 'a\u0001' }], extra: 1, payload: '***' }),
      ),
    );
    expect(issues).toContain(
      'consoleContent.postData[0].name: contains a character that XML cannot carry',
    );
    expect(
      issues.some((i) => i.startsWith('consoleContent: Unrecognized key') && i.includes('extra')),
    ).toBe(true);
    expect(issues.some((i) => i.startsWith('consoleContent.payload:'))).toBe(true);
  });

  it('refuses malformed JSON', () => {
    expect(issuesOf(() => decodeJson('nameValue', '{'))[0]).toMatch(/^: malformed JSON/);
  });
});

describe('entities', () => {
  it('decodes the predefined entities and character references, and refuses others', () => {
    expect(
      decodeXml(`<pal:string ${PAL}>&lt;&#x41;&#66;&amp;amp;&quot;</pal:string>`, 'string'),
    ).toBe('<AB&amp;"');
    expect(
      issuesOf(() => decodeXml(`<pal:string ${PAL}>&#x110000;</pal:string>`, 'string'))[0],
    ).toContain('invalid character reference');
  });
});

describe('decodeXml refuses what fast-xml-parser will not build as bad input, never as a crash', () => {
  const nested = (depth: number) =>
    `<pal:palInfo xmlns:pal="urn:pal-workflow:pal">${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</pal:palInfo>`;

  it.each([99, 100, 101, 102, 5000])('elements nested %i deep', (depth) => {
    expect(() => decodeXml(nested(depth), 'palInfo')).toThrow(DecodeError);
  });

  it('says why for a document nested too deep', () => {
    expect(() => decodeXml(nested(150), 'palInfo')).toThrow(/nested deeper than 100 levels/);
  });

  it.each(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'])(
    'an element named %s is an unknown member',
    (name) => {
      const text = `<pal:palInfo xmlns:pal="urn:pal-workflow:pal"><${name}>x</${name}></pal:palInfo>`;
      expect(() => decodeXml(text, 'palInfo')).toThrow(DecodeError);
      expect(({} as Record<string, unknown>).x).toBeUndefined();
    },
  );
});
