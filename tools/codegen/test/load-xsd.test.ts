/** Given a small XSD, want this model: the mappings of load/xsd.ts, case by case. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Diagnostics } from '../src/diagnostics.js';
import { loadXsdFiles } from '../src/load/xsd.js';
import type { SchemaModel } from '../src/model/schema-model.js';

const dir = mkdtempSync(join(tmpdir(), 'load-xsd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(
  body: string,
  form = 'unqualified',
  after = '',
): { model: SchemaModel; diagnostics: Diagnostics } {
  const path = join(dir, `t${Math.random().toString(36).slice(2)}.xsd`);
  writeFileSync(
    path,
    `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="urn:t" targetNamespace="urn:t" elementFormDefault="${form}" version="1.0">${body}</xs:schema>${after}`,
  );
  const diagnostics = new Diagnostics();
  return { model: loadXsdFiles([path], diagnostics), diagnostics };
}

const seq = (name: string, elements: string) =>
  `<xs:complexType name="${name}"><xs:sequence>${elements}</xs:sequence></xs:complexType>`;

describe('load/xsd', () => {
  it.each([
    {
      given: seq(
        'A',
        '<xs:element name="x" type="xs:int"/><xs:element name="y" type="xs:string" minOccurs="0" maxOccurs="unbounded"/>',
      ),
      want: { kind: 'object', members: ['x:int', 'y?:string[]'] },
    },
    {
      given: seq('A', '<xs:element name="n" type="xs:string" minOccurs="0" nillable="true"/>'),
      want: { kind: 'object', members: ['n?:string nil'] },
    },
    {
      given: seq(
        'A',
        '<xs:element name="row" type="xs:string" minOccurs="0" maxOccurs="unbounded"/>',
      ),
      want: { kind: 'array', item: 'string', itemElement: 'row' },
    },
    {
      given: seq(
        'A',
        '<xs:element name="entry" minOccurs="0" maxOccurs="unbounded"><xs:complexType><xs:sequence><xs:element name="key" type="xs:string"/><xs:element name="value" type="xs:int"/></xs:sequence></xs:complexType></xs:element>',
      ),
      want: { kind: 'map', value: 'int' },
    },
  ])('maps $want.kind', ({ given, want }) => {
    const { model, diagnostics } = load(given);
    expect(diagnostics.format('warning')).toBe('');
    const t = model.types.find((x) => x.name === 'A')!;
    expect(t.kind).toBe(want.kind);
    if (t.kind === 'object')
      expect(
        t.members.map(
          (m) =>
            `${m.name}${m.optional ? '?' : ''}:${m.type.name}${m.list ? '[]' : ''}${m.nillable ? ' nil' : ''}`,
        ),
      ).toEqual(want.members);
    if (t.kind === 'array')
      expect({ item: t.item.name, itemElement: t.itemElement }).toEqual({
        item: want.item,
        itemElement: want.itemElement,
      });
    if (t.kind === 'map') expect(t.value.name).toBe(want.value);
    // Entry types exist only inside maps.
    expect(model.types.map((x) => x.name)).toEqual(['A']);
  });

  it('flattens extensions base-first and tells enums from complex types', () => {
    const { model } = load(
      seq('Base', '<xs:element name="a" type="xs:string"/>') +
        '<xs:complexType name="Derived"><xs:complexContent><xs:extension base="t:Base"><xs:sequence><xs:element name="b" type="t:colour"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>' +
        '<xs:simpleType name="colour"><xs:restriction base="xs:string"><xs:enumeration value="RED"/></xs:restriction></xs:simpleType>',
    );
    const derived = model.types.find((t) => t.name === 'Derived');
    expect(derived).toMatchObject({ kind: 'object', base: 'Base' });
    expect(
      derived?.kind === 'object' &&
        derived.members.map((m) => `${m.name}:${m.type.kind}/${m.type.name}`),
    ).toEqual(['a:builtin/string', 'b:enum/Colour']);
    expect(model.types.find((t) => t.name === 'Colour')).toMatchObject({
      kind: 'enum',
      xsdName: 'colour',
      values: ['RED'],
    });
  });

  const limited = (facets: string) =>
    `<xs:simpleType><xs:restriction base="xs:string">${facets}</xs:restriction></xs:simpleType>`;

  it.each([
    {
      given: seq(
        'A',
        `<xs:element name="x" minOccurs="0">${limited('<xs:maxLength value="5"/>')}</xs:element>`,
      ),
      want: { name: 'x', type: { kind: 'builtin', name: 'string' }, optional: true, maxLength: 5 },
    },
    {
      given:
        seq('A', '<xs:element name="x" type="t:short"/>') +
        '<xs:simpleType name="short"><xs:restriction base="xs:string"><xs:maxLength value="9"/></xs:restriction></xs:simpleType>',
      want: { name: 'x', type: { kind: 'builtin', name: 'string' }, optional: false, maxLength: 9 },
    },
    {
      given: seq('A', '<xs:element name="x" type="xs:string"/>'),
      want: { name: 'x', type: { kind: 'builtin', name: 'string' }, optional: false },
    },
  ])('reads a string limited by xs:maxLength: $want', ({ given, want }) => {
    const { model, diagnostics } = load(given);
    expect(diagnostics.format('warning')).toBe('');
    // A limited string is no type of its own.
    expect(model.types.map((t) => t.name)).toEqual(['A']);
    const a = model.types[0]!;
    expect(a.kind === 'object' && a.members).toEqual([{ list: false, nillable: false, ...want }]);
  });

  it.each([
    { facets: '<xs:maxLength value="0"/>' },
    { facets: '<xs:maxLength value="ten"/>' },
    { facets: '<xs:maxLength value="5"/><xs:pattern value="[a-z]*"/>' },
    { facets: '<xs:minLength value="5"/>' },
  ])('refuses an anonymous string restriction with $facets: XSD023', ({ facets }) => {
    const { diagnostics } = load(seq('A', `<xs:element name="x">${limited(facets)}</xs:element>`));
    expect(diagnostics.format('error')).toMatch(/^error XSD023 t\w+\.xsd#A\.x: /);
  });

  it.each([
    {
      given: seq('A', '<xs:choice><xs:element name="x" type="xs:int"/></xs:choice>'),
      code: 'XSD020',
    },
    { given: seq('A', '<xs:element name="x" type="xs:int" maxOccurs="5"/>'), code: 'XSD021' },
    { given: seq('A', '<xs:element name="x" type="xs:dateTime"/>'), code: 'XSD010' },
    { given: seq('A', '<xs:element name="x" type="t:Missing"/>'), code: 'XSD041' },
  ])('reports $code with its location', ({ given, code }) => {
    const { diagnostics } = load(given);
    expect(diagnostics.hasErrors).toBe(true);
    expect(diagnostics.format('error')).toMatch(new RegExp(`^error ${code} t\\w+\\.xsd#A`));
  });

  it.each([
    {
      // A lost `>`: the parser alone read on and dropped the member without a word.
      given: seq('A', '<xs:element name="x" type="xs:int"/\n<xs:element name="y" type="xs:int"/>'),
      want: /^error XSD000 t\w+\.xsd:\d+:\d+: not well-formed XML: Attribute '\/' /,
    },
    {
      // An unquoted attribute: the parser alone made a member named "undefined".
      given: seq('A', '<xs:element name=x type="xs:int"/>'),
      want: /^error XSD000 t\w+\.xsd:1:\d+: not well-formed XML: Attribute 'name' /,
    },
    {
      given: seq('A', '<xs:element name="x" type="xs:int">'),
      want: /^error XSD000 t\w+\.xsd:1:\d+: not well-formed XML: Expected closing tag /,
    },
    { given: '<!-- text after the root -->', after: 'junk', want: /^error XSD000 .*Extra text/ },
  ])('refuses a file that is not well-formed XML, at its line: $want', ({ given, after, want }) => {
    const { model, diagnostics } = load(given, 'unqualified', after);
    expect(diagnostics.format('error')).toMatch(want);
    // Nothing of the file is read, so nothing half-read reaches the generators.
    expect(diagnostics.items).toHaveLength(1);
    expect(model.types).toEqual([]);
  });

  it.each([
    { given: seq('A', '<xs:element type="xs:int"/>'), want: 'an element needs a name attribute' },
    { given: seq('A', '<xs:element name="a b" type="xs:int"/>'), want: '"a b" is not an XML name' },
    {
      given: '<xs:complexType><xs:sequence/></xs:complexType>',
      want: 'a global xs:complexType needs a name attribute',
    },
  ])('refuses a declaration without an XML name: $want', ({ given, want }) => {
    const { diagnostics } = load(given);
    expect(diagnostics.format('error')).toMatch(
      new RegExp(`^error XSD024 t\\w+\\.xsd#[^:]+: ${want}$`),
    );
  });

  it.each([
    { given: seq('My-Type', ''), name: 'My-Type' },
    {
      given:
        '<xs:simpleType name="colour.v2"><xs:restriction base="xs:string"><xs:enumeration value="RED"/></xs:restriction></xs:simpleType>',
      name: 'colour.v2',
    },
  ])('refuses a type name that is no TypeScript identifier: $name', ({ given, name }) => {
    const { diagnostics } = load(given);
    expect(diagnostics.format('error')).toMatch(
      new RegExp(
        `^error XSD025 t\\w+\\.xsd#${name.replace('.', '\\.')}: type name "${name}" is not a TypeScript identifier \\(letters, digits and _ only\\)$`,
      ),
    );
  });

  it('keeps a member name with - or . as it is (the emitters quote it)', () => {
    const { model, diagnostics } = load(
      seq(
        'A',
        '<xs:element name="branch-name" type="xs:string"/><xs:element name="v1.x" type="xs:int"/>',
      ),
    );
    expect(diagnostics.format('warning')).toBe('');
    const a = model.types[0]!;
    expect(a.kind === 'object' && a.members.map((m) => m.name)).toEqual(['branch-name', 'v1.x']);
  });

  const derived = (elements: string) =>
    seq('Base', '<xs:element name="x" type="xs:string"/>') +
    `<xs:complexType name="A"><xs:complexContent><xs:extension base="t:Base"><xs:sequence>${elements}</xs:sequence></xs:extension></xs:complexContent></xs:complexType>`;

  it.each([
    {
      given: seq(
        'A',
        '<xs:element name="x" type="xs:int"/><xs:element name="x" type="xs:string"/>',
      ),
      want: 'error XSD042 #A.x: member x is declared twice in the sequence',
    },
    {
      given: derived('<xs:element name="x" type="xs:int" minOccurs="0"/>'),
      want: 'error XSD061 #A.x: member x is already a member of the base type Base',
    },
    {
      // Re-declared two levels down, with the same type: still one property declared twice.
      given:
        derived('<xs:element name="y" type="xs:int"/>').replace('name="A"', 'name="Middle"') +
        '<xs:complexType name="A"><xs:complexContent><xs:extension base="t:Middle"><xs:sequence><xs:element name="x" type="xs:string"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>',
      want: 'error XSD061 #A.x: member x is already a member of the base type Middle',
    },
    {
      // The loader reads no attributes: one beside an element of its name was dropped silently.
      given:
        '<xs:complexType name="A"><xs:sequence><xs:element name="x" type="xs:string"/></xs:sequence><xs:attribute name="x" type="xs:string"/></xs:complexType>',
      want: 'error XSD026 #A: xs:attribute in a complex type is not supported (members are the elements of an xs:sequence)',
    },
    {
      given: derived('').replace(
        '</xs:extension>',
        '<xs:attribute name="x" type="xs:string"/></xs:extension>',
      ),
      want: 'error XSD026 #A: xs:attribute in a complex type is not supported (members are the elements of an xs:sequence)',
    },
  ])('refuses a member name used twice in one type: $want', ({ given, want }) => {
    const { diagnostics } = load(given);
    expect(diagnostics.format('error').replace(/ t\w+\.xsd#/, ' #')).toBe(want);
  });

  it('requires unqualified members', () => {
    expect(load(seq('A', ''), 'qualified').diagnostics.format('error')).toContain('XSD003');
  });
});
