/** fast-check arbitraries for every schema type, derived from the generated descriptors. */
import fc from 'fast-check';
import { rootElements, typeDescriptors, type RootName, type TypeName } from '../src/index.js';

const XML_CHAR = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

export const xmlString: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => XML_CHAR.test(s)),
  fc.constantFrom(
    '',
    ' padded ',
    '&<>"\'',
    'line\r\nbreak\r',
    '\t tab',
    'ünïcødé €',
    '😀 emoji',
    ']]>',
  ),
);

export function arbitraryOf(type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'xs:string':
      return xmlString;
    case 'xs:boolean':
      return fc.boolean();
    case 'xs:int':
      return fc.integer({ min: -2147483648, max: 2147483647 });
    case 'xs:unsignedShort':
      return fc.integer({ min: 0, max: 65535 });
    case 'xs:base64Binary':
      return fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b).toString('base64'));
  }
  const d = typeDescriptors[type as TypeName];
  switch (d.kind) {
    case 'enum':
      return fc.constantFrom(...d.values);
    case 'array':
      return fc.array(arbitraryOf(d.item), { maxLength: 3 });
    case 'map':
      // "__proto__" is reserved: zod drops it from records and the XML decoder refuses it.
      return fc.dictionary(
        xmlString.filter((k) => k !== '__proto__'),
        arbitraryOf(d.value),
        { maxKeys: 3 },
      );
    case 'object': {
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const m of d.members) {
        let a = arbitraryOf(m.type);
        // XML cannot tell an empty list from an absent one: lists that are present have items.
        if (m.list) a = fc.array(a, { minLength: 1, maxLength: 3 });
        if (m.nillable) a = fc.option(a, { nil: null });
        shape[m.name] = a;
      }
      const requiredKeys = d.members.filter((m) => !m.optional).map((m) => m.name);
      return fc.record(shape, { requiredKeys });
    }
  }
}

export function arbitraryOfRoot(root: RootName): fc.Arbitrary<unknown> {
  return arbitraryOf(rootElements[root].type);
}
