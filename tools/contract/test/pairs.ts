/**
 * Fixture pairs of schemas: the repository's schemas/ as "before", and a copy with one edit as
 * "after", each in its own temporary folder. An edit that does not apply fails the test, so a
 * schema that moves on cannot silently turn a case into "no change".
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPOSITORY_ROOT } from '../src/paths.js';

export interface Edit {
  file: 'schemas/xsd/pal.xsd' | 'schemas/xsd/services.xsd' | 'schemas/openapi/operations.yaml';
  from: string | RegExp;
  to: string;
}

export interface Pair {
  before: string;
  after: string;
  dispose(): void;
}

export function makePair(edits: Edit[]): Pair {
  const before = mkdtempSync(join(tmpdir(), 'contract-before-'));
  const after = mkdtempSync(join(tmpdir(), 'contract-after-'));
  for (const root of [before, after])
    cpSync(join(REPOSITORY_ROOT, 'schemas'), join(root, 'schemas'), { recursive: true });
  for (const edit of edits) {
    const path = join(after, edit.file);
    const text = readFileSync(path, 'utf8');
    const changed = text.replace(edit.from, edit.to);
    if (changed === text)
      throw new Error(`edit does not apply to ${edit.file}: ${String(edit.from)}`);
    writeFileSync(path, changed);
  }
  return {
    before,
    after,
    dispose: () => {
      rmSync(before, { recursive: true, force: true });
      rmSync(after, { recursive: true, force: true });
    },
  };
}
