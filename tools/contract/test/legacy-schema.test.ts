// Bases written before `x-roots` existed still load: the roots were the generator's defaults then.
import { describe, expect, it } from 'vitest';
import { upgradeLegacySchema } from '../src/base.js';

const OPS = 'schemas/openapi/operations.yaml';

describe('upgradeLegacySchema', () => {
  it.each([
    ['an operations file without x-roots gets the old defaults', OPS, 'openapi: 3.0.3\n', true],
    ['an operations file with x-roots is left alone', OPS, 'x-roots:\n  service: s\n', false],
    ['other schema files are left alone', 'schemas/xsd/pal.xsd', '<xs:schema/>', false],
  ])('%s', (_name, file, text, upgraded) => {
    const out = upgradeLegacySchema(file, text);
    expect(out.startsWith('x-roots:\n  service: services\n  user: user\n')).toBe(upgraded);
    expect(out.endsWith(text)).toBe(true);
  });
});
