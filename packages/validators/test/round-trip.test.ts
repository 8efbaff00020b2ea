/**
 * Every root type, property-based: value → XML → value and value → JSON → value,
 * and every XML document the encoder writes is valid against the XSDs (libxml2).
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { SchemaValidator } from '@pal-workflow/test-support';
import {
  decodeJson,
  decodeXml,
  encodeJson,
  encodeXml,
  rootElements,
  typeDescriptors,
  type RootName,
  type TypeName,
} from '../src/index.js';
import { arbitraryOfRoot } from './arbitraries.js';

const validator = new SchemaValidator();
afterAll(() => validator.dispose());

const roots = Object.keys(rootElements) as RootName[];

describe.each(roots)('root %s', (root) => {
  it('survives value → XML → value, and the XML is valid against the XSD', () => {
    fc.assert(
      fc.property(arbitraryOfRoot(root), (value) => {
        const xml = encodeXml(root, value as never);
        validator.assertValid(xml);
        expect(decodeXml(xml, root)).toEqual(value);
      }),
      { numRuns: 60 },
    );
  });

  it('survives value → JSON → value', () => {
    fc.assert(
      fc.property(arbitraryOfRoot(root), (value) => {
        expect(decodeJson(root, encodeJson(root, value as never))).toEqual(value);
      }),
      { numRuns: 60 },
    );
  });
});

describe('coverage of the round trips', () => {
  it('reaches every schema type from some root element', () => {
    const reached = new Set<string>();
    const visit = (type: string) => {
      if (type.startsWith('xs:') || reached.has(type)) return;
      reached.add(type);
      const d = typeDescriptors[type as TypeName];
      if (d.kind === 'object') {
        d.members.forEach((m) => visit(m.type));
        if (d.base) visit(d.base); // a base's members are written through its extensions
      }
      if (d.kind === 'array') visit(d.item);
      if (d.kind === 'map') visit(d.value);
    };
    roots.forEach((root) => visit(rootElements[root].type));
    expect(Object.keys(typeDescriptors).filter((t) => !reached.has(t))).toEqual([]);
  });
});
