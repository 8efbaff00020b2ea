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
  type RootName,
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
