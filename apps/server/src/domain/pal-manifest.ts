// The pal package format: a folder holding a `pal.json` manifest and the files it names.
// Reference: docs/pal-format.md. The keys id, name, description, category, publisher, branchName,
// modes, shadow, shell, test and installed are the decided ones (DESIGN §7); `lifetimes` and
// `workflows` are this service's additions. Unknown keys are refused, so a typo cannot pass silently.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, normalize } from 'node:path';
import { z } from 'zod';
import { InvalidArgumentError } from './errors.js';

export const PAL_MANIFEST_FILE = 'pal.json';
/** Pal ids appear in URL paths: letters, digits, ".", "_", "-"; starting with a letter or digit. */
export const PAL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MODULE_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;
const MAX_WORKFLOW_FILE_BYTES = 1024 * 1024;
const MAX_DAYS = 36_500;

const text = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
const days = z
  .number()
  .int('expected a whole number of days')
  .min(1, 'must be at least 1')
  .max(MAX_DAYS, `must be at most ${MAX_DAYS}`);

export const zPalManifest = z.strictObject({
  id: z
    .string()
    .regex(
      PAL_ID_PATTERN,
      'expected 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit',
    ),
  name: text(200).optional(),
  description: text(4000).optional(),
  category: text(200).optional(),
  publisher: text(200).optional(),
  branchName: text(200).optional(),
  modes: z
    .strictObject({
      transaction: z.boolean().default(false),
      console: z.boolean().default(false),
      web: z.boolean().default(false),
    })
    .default({ transaction: false, console: false, web: false }),
  shadow: z.boolean().default(false),
  shell: z.boolean().default(false),
  test: z.boolean().default(false),
  installed: z.boolean().default(false),
  /** Days from a transaction's creation to each of its end dates (T1). */
  lifetimes: z
    .strictObject({
      executeDays: days.optional(),
      accessDays: days.optional(),
      archiveDays: days.optional(),
    })
    .superRefine((l, issues) => {
      if (
        l.executeDays !== undefined &&
        l.accessDays !== undefined &&
        l.accessDays < l.executeDays
      ) {
        issues.addIssue({
          code: 'custom',
          path: ['accessDays'],
          message: 'must not be less than executeDays',
        });
      }
      const before = l.accessDays ?? l.executeDays;
      if (before !== undefined && l.archiveDays !== undefined && l.archiveDays < before) {
        issues.addIssue({
          code: 'custom',
          path: ['archiveDays'],
          message: `must not be less than ${l.accessDays !== undefined ? 'accessDays' : 'executeDays'}`,
        });
      }
    })
    .optional(),
  /** Workflow module name → a `.js` file inside the pal folder. Run by a later part of the service. */
  workflows: z
    .record(
      z
        .string()
        .regex(MODULE_NAME_PATTERN, 'module names are 1 to 64 letters, digits, ".", "_" or "-"'),
      z
        .string()
        .refine((p) => p.endsWith('.js'), 'expected a path to a .js file')
        .refine(
          (p) => !isAbsolute(p) && !normalize(p).split(/[\\/]/).includes('..'),
          'must be a path inside the pal folder',
        ),
    )
    .optional(),
});

export type PalManifest = z.output<typeof zPalManifest>;
export type PalLifetimes = NonNullable<PalManifest['lifetimes']>;

export interface ManifestIssue {
  /** Dotted key, e.g. `modes.console`; empty for the whole document. */
  key: string;
  message: string;
}

/** A manifest that does not validate. Each line of the message: `FILE: KEY: what is wrong`. */
export class ManifestError extends InvalidArgumentError {
  override readonly name = 'ManifestError';
  constructor(
    readonly file: string,
    readonly issues: ManifestIssue[],
  ) {
    super(
      issues
        .map((i) => (i.key ? `${file}: ${i.key}: ${i.message}` : `${file}: ${i.message}`))
        .join('\n'),
    );
  }
}

function describeIssue(issue: z.core.$ZodIssue): ManifestIssue[] {
  const key = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({ key: key ? `${key}.${k}` : k, message: 'unknown key' }));
  }
  if (issue.code === 'invalid_type') {
    const expected = issue.expected === 'int' ? 'whole number' : issue.expected;
    // JSON has no undefined: an undefined input is a missing key.
    if (issue.input === undefined) return [{ key, message: `is required (expected ${expected})` }];
    if (issue.expected === 'int' && typeof issue.input === 'number') {
      return [{ key, message: `expected a whole number, got ${issue.input}` }];
    }
    return [{ key, message: `expected ${expected}, got ${typeName(issue.input)}` }];
  }
  return [{ key, message: issue.message.replace(/^Invalid input: /, '') }];
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Validates a parsed pal.json. `file` names it in the errors. */
export function parsePalManifest(json: unknown, file: string): PalManifest {
  const result = zPalManifest.safeParse(json, { reportInput: true });
  if (!result.success) throw new ManifestError(file, result.error.issues.flatMap(describeIssue));
  return result.data;
}

/** A pal read from its folder and validated: the manifest and the workflow sources it names. */
export interface PalPackage {
  manifest: PalManifest;
  /** Path inside the folder (as written in the manifest) → UTF-8 text. */
  files: Record<string, string>;
  /** SHA-256 over manifest and files: equal hashes, equal packages. */
  contentHash: string;
  /** Where it was read from, for messages. */
  source: string;
}

/** Builds a package from a manifest object and file contents (used by loadPalPackage and tests). */
export function buildPalPackage(
  json: unknown,
  files: Record<string, string>,
  source = PAL_MANIFEST_FILE,
): PalPackage {
  const manifest = parsePalManifest(json, source);
  const missing = Object.entries(manifest.workflows ?? {}).filter(([, path]) => !(path in files));
  if (missing.length > 0) {
    throw new ManifestError(
      source,
      missing.map(([name, path]) => ({
        key: `workflows.${name}`,
        message: `file "${path}" not found in the pal folder`,
      })),
    );
  }
  const kept = Object.fromEntries(
    Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const contentHash = createHash('sha256')
    .update(JSON.stringify({ manifest, files: kept }))
    .digest('hex');
  return { manifest, files: kept, contentHash, source };
}

/**
 * Reads a pal folder: `FOLDER/pal.json` and the workflow files it names. Errors name the file
 * (as `FOLDER/pal.json`, the folder as given) and the key.
 */
export async function loadPalPackage(folder: string): Promise<PalPackage> {
  const file = join(folder, PAL_MANIFEST_FILE);
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'not found (a pal folder holds a pal.json manifest)'
        : `cannot be read (${code})`;
    throw new ManifestError(file, [{ key: '', message: why }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw new ManifestError(file, [
      { key: '', message: `not valid JSON: ${(error as Error).message}` },
    ]);
  }
  const manifest = parsePalManifest(json, file);

  const files: Record<string, string> = {};
  const problems: ManifestIssue[] = [];
  for (const [name, path] of Object.entries(manifest.workflows ?? {})) {
    const full = join(folder, ...path.split(/[\\/]/));
    try {
      const info = await stat(full);
      if (!info.isFile()) throw Object.assign(new Error(), { code: 'ENOENT' });
      if (info.size > MAX_WORKFLOW_FILE_BYTES) {
        problems.push({ key: `workflows.${name}`, message: `file "${path}" is larger than 1 MiB` });
        continue;
      }
      files[path] = await readFile(full, 'utf8');
    } catch {
      problems.push({
        key: `workflows.${name}`,
        message: `file "${path}" not found in the pal folder`,
      });
    }
  }
  if (problems.length > 0) throw new ManifestError(file, problems);
  return buildPalPackage(json, files, file);
}
