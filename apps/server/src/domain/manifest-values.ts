// Pieces the manifest's schemas share (pal-manifest.ts, pal-document-manifest.ts) and the shape of
// one problem found in a pal package, reported as `FILE: KEY: what is wrong` (docs/pal-format.md).
import { isAbsolute, normalize } from 'node:path';
import { z } from 'zod';

export interface ManifestIssue {
  /** Where in the manifest, e.g. `modes.console`, `documents[0].fields[2].x`; empty for the whole. */
  key: string;
  message: string;
}

/** A path into the manifest as its key: `documents[0].fields[2].x`. */
export function issueKey(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) =>
      typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`,
    )
    .join('');
}

/** A trimmed, non-empty string of at most `max` characters. */
export const text = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

/** A relative path that stays inside the pal folder (no absolute path, no `..`). */
export function isInsideFolder(path: string): boolean {
  return !isAbsolute(path) && !normalize(path).split(/[\\/]/).includes('..');
}
