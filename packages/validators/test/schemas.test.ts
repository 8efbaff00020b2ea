/** The XSDs themselves: they load in libxml2, and a sample of every root element validates. */
import { afterAll, describe, expect, it } from 'vitest';
import { SchemaValidator } from '@pal-workflow/test-support';
import fc from 'fast-check';
import {
  encodeXml,
  rootElements,
  namespaces,
  zPalSearch,
  zTransactionSearch,
  type RootName,
} from '../src/index.js';
import { arbitraryOfRoot } from './arbitraries.js';

const validator = new SchemaValidator();
afterAll(() => validator.dispose());

describe('schemas/xsd', () => {
  it('both XSDs compile in libxml2 with their namespaces', () => {
    expect(validator.namespaces.sort()).toEqual(Object.values(namespaces).sort());
  });

  it.each(Object.keys(rootElements) as RootName[])('a sample <%s> validates', (root) => {
    const [sample] = fc.sample(arbitraryOfRoot(root), { numRuns: 1, seed: 42 });
    validator.assertValid(encodeXml(root, sample as never));
  });

  it('rejects what the schema forbids (the validator is really checking)', () => {
    const bad = `<pal:palInfo xmlns:pal="urn:pal-workflow:pal"><deployed>yes</deployed></pal:palInfo>`;
    const result = validator.check(bad);
    expect(result.valid).toBe(false);
    expect(result.errors.join('\n')).toMatch(/deployed/);
  });

  it('limits a search filter to 1000 characters, in zod and in the XSD alike', () => {
    const search = {
      exactName: false,
      exactDescription: false,
      exactCategory: false,
      startRecord: 0,
      includeTest: false,
    };
    for (const [length, ok] of [
      [1000, true],
      [1001, false],
    ] as const) {
      const sso = 'x'.repeat(length);
      expect(zTransactionSearch.safeParse({ ...search, sso }).success, `zod ${length}`).toBe(ok);
      expect(validator.check(encodeXml('transactionSearch', { ...search, sso })).valid).toBe(ok);
    }
    expect(zPalSearch.shape.publisher.safeParse('y'.repeat(1001)).success).toBe(false);
  });
});
