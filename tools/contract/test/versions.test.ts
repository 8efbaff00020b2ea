/**
 * One contract, one version: the four packages share it (changesets `fixed` group) and the
 * bundled OpenAPI that the server skeleton serves names it as info.version.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTRACT_PACKAGES } from '../src/changeset.js';
import { PACKAGES } from '../src/release-dry.js';
import { REPOSITORY_ROOT } from '../src/paths.js';

const version = (name: string) =>
  (
    JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'packages', name, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

describe('the contract version', () => {
  it('is shared by the four packages, which are the changesets fixed group', () => {
    expect(new Set(PACKAGES.map(version)).size).toBe(1);
    const config = JSON.parse(
      readFileSync(join(REPOSITORY_ROOT, '.changeset/config.json'), 'utf8'),
    ) as { fixed: string[][] };
    expect(config.fixed).toEqual([[...CONTRACT_PACKAGES]]);
  });

  it("is the bundled OpenAPI's info.version", () => {
    const openapi = readFileSync(
      join(REPOSITORY_ROOT, 'packages/server-skeleton/src/generated/openapi.gen.ts'),
      'utf8',
    );
    expect(/info: \{[^}]*?version: '([^']+)'/s.exec(openapi)?.[1]).toBe(version('types'));
  });
});
