// The pal package format: a folder holding a `pal.json` manifest and the files it names.
// Reference: docs/pal-format.md. The keys id, name, description, category, publisher, branchName,
// modes, shadow, shell, test, installed, documents and actions are the decided ones; `lifetimes`,
// `workflows` and `uploads` are this service's additions. Unknown keys are refused, so a typo cannot pass silently.
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { isXmlText } from '@pal-workflow/validators';
import { z } from 'zod';
import { CONFIG_DEFAULTS } from '../config.js';
import { memberPath, walkJson } from '../json-walk.js';
import { InvalidArgumentError } from './errors.js';
import { isInsideFolder, issueKey, text, type ManifestIssue } from './manifest-values.js';
import { listProblem, MAX_SIGNATURES, zManifestDocuments } from './pal-document-manifest.js';
import {
  megabytes,
  readPalDocuments,
  type DocumentLimits,
  type PalDocumentFile,
} from './pal-documents.js';

export type { ManifestIssue } from './manifest-values.js';

export const PAL_MANIFEST_FILE = 'pal.json';
/** Pal ids appear in URL paths: letters, digits, ".", "_", "-"; starting with a letter or digit. */
export const PAL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MODULE_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;
const MAX_WORKFLOW_FILE_BYTES = 1024 * 1024;
/**
 * All of a pal's workflow files together. Every run hands them to its worker thread, whose V8
 * heap is bounded (WORKFLOW_WORKER_HEAP_MB) only as a backstop: Node may abort the whole process
 * instead of the worker when that bound is reached, so no pal may come near it.
 */
export const MAX_WORKFLOW_SOURCES_BYTES = 8 * 1024 * 1024;
/** pal.json itself: room for a thousand fields and more, far from a file that would hurt to read. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_DAYS = 36_500;
const days = z
  .number()
  .int('expected a whole number of days')
  .min(1, 'must be at least 1')
  .max(MAX_DAYS, `must be at most ${MAX_DAYS}`);

/** An export a browser may run: a JavaScript identifier, as `export function name` declares it. */
const EXPORT_NAME_PATTERN = /^[A-Za-z_$][A-Za-z0-9_$]{0,199}$/;
export const MAX_ACTIONS = 50;
const MAX_LABEL = 80;
const actionList = (what: string) =>
  z.string().superRefine((value, ctx) => {
    const problem = listProblem(value, what);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
const zAction = z.strictObject({
  name: z
    .string()
    .regex(
      EXPORT_NAME_PATTERN,
      'expected the name of an export of the module (a JavaScript identifier)',
    ),
  label: text(MAX_LABEL),
  roles: actionList('role').optional(),
  statuses: actionList('status').optional(),
  /**
   * Signatures this action needs from the person who runs it, beside those `required` always: a
   * list, not a `|`-separated string, since a signature's id may hold "|".
   */
  signatures: z
    .array(z.string())
    .max(MAX_SIGNATURES, `at most ${MAX_SIGNATURES} signatures`)
    .superRefine((ids, ctx) => {
      const twice = ids.find((id, i) => ids.indexOf(id) !== i);
      if (twice !== undefined)
        ctx.addIssue({ code: 'custom', message: `names the signature "${twice}" twice` });
    })
    .optional(),
});
/** Reports each `name` of a list that an earlier item (`where[i]`) already took. */
function reportNamesTwice(
  list: readonly { name: string }[],
  ctx: z.RefinementCtx,
  where: string,
): void {
  list.forEach((item, i) => {
    const first = list.findIndex((a) => a.name === item.name);
    if (first !== i)
      ctx.addIssue({
        code: 'custom',
        path: [i, 'name'],
        message: `"${item.name}" is already the name of ${where}[${first}]`,
      });
  });
}

/** Each name once in a module's list: a posted action names one button. */
const actions = (module: 'transaction' | 'console') =>
  z
    .array(zAction)
    .max(MAX_ACTIONS, `at most ${MAX_ACTIONS} actions`)
    .superRefine((list, ctx) => {
      reportNamesTwice(list, ctx, `actions.${module}`);
      list.forEach((action, i) => {
        // A console session has no role and no business status: its console grant is the
        // permission (docs/pal-format.md, "Actions").
        if (module === 'console')
          for (const key of ['roles', 'statuses', 'signatures'] as const)
            if (action[key] !== undefined)
              ctx.addIssue({
                code: 'custom',
                path: [i, key],
                message:
                  key === 'signatures'
                    ? 'console actions have no signatures (a console session signs nothing)'
                    : 'console actions have no roles or statuses (the console grant decides)',
              });
      });
    });

/** The manifest's `actions`: the exports a browser session may run, by module. */
export const zManifestActions = z.strictObject({
  transaction: actions('transaction').optional(),
  console: actions('console').optional(),
});

/** What a person may upload: the file kinds the service can tell by their bytes. */
export const UPLOAD_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;
export type UploadType = (typeof UPLOAD_TYPES)[number];
/** Files a pal may ask for; a session form carries at most this many. */
export const MAX_UPLOADS = 10;
const zUpload = z.strictObject({
  name: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/,
      'expected 1 to 64 letters, digits, "_" or "-", starting with a letter or digit',
    ),
  label: text(MAX_LABEL),
  accept: actionList('type')
    .refine(
      (list) => list.split('|').every((t) => (UPLOAD_TYPES as readonly string[]).includes(t)),
      `expected a "|"-list of ${UPLOAD_TYPES.join(', ')}`,
    )
    .default(UPLOAD_TYPES.join('|')),
  roles: actionList('role').optional(),
  required: z.boolean().default(false),
});

/** The manifest's `uploads`: files a person gives on the session page, each name once. */
export const zManifestUploads = z
  .array(zUpload)
  .max(MAX_UPLOADS, `at most ${MAX_UPLOADS} uploads`)
  .superRefine((list, ctx) => reportNamesTwice(list, ctx, 'uploads'));
export type ManifestUpload = z.output<typeof zUpload>;

/** pal.json's members, each checked on its own. */
const zManifestMembers = z.strictObject({
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
        .refine(isInsideFolder, 'must be a path inside the pal folder'),
    )
    .optional(),
  /** PDF and image files with the fields, signatures and bookmarks placed on them. */
  documents: zManifestDocuments.optional(),
  /** What a person in a browser session may run, shown as buttons (docs/pal-format.md). */
  actions: zManifestActions.optional(),
  /** Files a person uploads on the session page (docs/pal-format.md). */
  uploads: zManifestUploads.optional(),
});

/** pal.json: its members, and what one says of another (an action's signatures). */
export const zPalManifest = zManifestMembers.superRefine((manifest, ctx) => {
  // An action's signatures are the documents' signatures, each of a role the action is offered
  // to. A signature is only ever asked of the person of its role, so one of a role nobody who
  // runs the action has would never be asked: surely a mistake of the pal's.
  const signatures = new Map(
    (manifest.documents ?? []).flatMap((d) => (d.signatures ?? []).map((s) => [s.id, s] as const)),
  );
  manifest.actions?.transaction?.forEach((action, a) => {
    const offeredTo = action.roles?.split('|');
    action.signatures?.forEach((id, i) => {
      const signature = signatures.get(id);
      const problem =
        signature === undefined
          ? `"${id}" is not the id of a signature in the documents`
          : offeredTo !== undefined && !offeredTo.includes(signature.role)
            ? `"${id}" is signed by the role ${signature.role}, to which this action is not offered`
            : undefined;
      if (problem)
        ctx.addIssue({
          code: 'custom',
          path: ['actions', 'transaction', a, 'signatures', i],
          message: problem,
        });
    });
  });
});

export type PalManifest = z.output<typeof zPalManifest>;
export type PalLifetimes = NonNullable<PalManifest['lifetimes']>;

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
  const key = issueKey(issue.path);
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
  return [{ key, message: issue.message.replace(/^Invalid (input|option): /, '') }];
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The most text problems a manifest's refusal names. */
const MAX_TEXT_ISSUES = 20;

/**
 * The manifest's keys and strings that hold a character XML cannot carry (a control character
 * other than tab and line breaks, U+FFFE, U+FFFF, a lone surrogate). A pal's name, description or
 * labels reach XML answers (P1, P2) and pages: there they came out as U+FFFD. Checked at deploy
 * only: a manifest already stored is read as it was, so a pal deployed before keeps working.
 */
export function manifestTextIssues(json: unknown): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  walkJson(json, (member) => {
    if (!member.inArray && !isXmlText(member.key)) {
      issues.push({
        key: memberPath(member),
        message: 'is a name that holds a character XML cannot carry',
      });
      return issues.length === MAX_TEXT_ISSUES ? 'stop' : 'skip';
    }
    if (typeof member.value === 'string' && !isXmlText(member.value))
      issues.push({
        key: memberPath(member),
        message: 'holds a character that XML cannot carry (a control character)',
      });
    return issues.length === MAX_TEXT_ISSUES ? 'stop' : undefined;
  });
  return issues;
}

/** Validates a parsed pal.json. `file` names it in the errors. */
export function parsePalManifest(json: unknown, file: string): PalManifest {
  const result = zPalManifest.safeParse(json, { reportInput: true });
  if (!result.success) throw new ManifestError(file, result.error.issues.flatMap(describeIssue));
  return result.data;
}

/** The pal folder as it was given, for messages that name its files; `.` for a built package. */
export function palFolder(pkg: Pick<PalPackage, 'source'>): string {
  return dirname(pkg.source);
}

/** A pal read from its folder and validated: the manifest and the files it names. */
export interface PalPackage {
  manifest: PalManifest;
  /** Workflow sources: path inside the folder (as written in the manifest) → UTF-8 text. */
  files: Record<string, string>;
  /** The manifest's documents, read and checked, in its order. */
  documents: PalDocumentFile[];
  /** SHA-256 over manifest and files: equal hashes, equal packages. */
  contentHash: string;
  /** Where it was read from, for messages. */
  source: string;
}

export interface PackageOptions {
  /** The largest document file accepted; default DOCUMENT_MAX_MB's. */
  documentMaxBytes?: number;
}

function documentLimits(options: PackageOptions): DocumentLimits {
  return { maxBytes: options.documentMaxBytes ?? CONFIG_DEFAULTS.DOCUMENT_MAX_MB * 1024 * 1024 };
}

const byPath = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Builds a package from a manifest object and the folder's files (used by loadPalPackage and
 * tests): path → text for workflow sources, path → bytes for documents (text is taken as its
 * UTF-8 bytes). Reads and checks the documents; every problem is reported at once.
 */
export function buildPalPackage(
  json: unknown,
  files: Readonly<Record<string, string | Uint8Array>>,
  source = PAL_MANIFEST_FILE,
  options: PackageOptions = {},
): Promise<PalPackage> {
  return assemblePalPackage(json, parsePalManifest(json, source), files, source, options);
}

/** What reading the folder found before the package could be assembled. */
interface FolderFindings {
  /** Problems of files the folder holds but that were not read (a workflow over its cap). */
  problems: ManifestIssue[];
  /** Sizes of document files too large to read: path → bytes. */
  unreadSizes: Record<string, number>;
  /** Document files not read, and why ("is a link to a file outside the pal folder"). */
  refused: Record<string, string>;
}

async function assemblePalPackage(
  json: unknown,
  manifest: PalManifest,
  files: Readonly<Record<string, string | Uint8Array>>,
  source: string,
  options: PackageOptions,
  found: FolderFindings = { problems: [], unreadSizes: {}, refused: {} },
): Promise<PalPackage> {
  const problems: ManifestIssue[] = [...manifestTextIssues(json), ...found.problems];
  for (const [name, path] of Object.entries(manifest.workflows ?? {})) {
    if (Object.hasOwn(files, path) || problems.some((p) => p.key === `workflows.${name}`)) continue;
    problems.push({
      key: `workflows.${name}`,
      message: `file "${path}" not found in the pal folder`,
    });
  }
  const documentFiles = new Set((manifest.documents ?? []).map((d) => d.file));
  const sources: Record<string, string> = {};
  const contents: Record<string, Uint8Array> = {};
  for (const [path, content] of Object.entries(files).sort(byPath)) {
    if (documentFiles.has(path)) {
      contents[path] = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    } else {
      sources[path] = typeof content === 'string' ? content : Buffer.from(content).toString('utf8');
    }
  }
  const sourceBytes = Object.values(sources).reduce((n, s) => n + Buffer.byteLength(s), 0);
  if (sourceBytes > MAX_WORKFLOW_SOURCES_BYTES)
    problems.push({
      key: 'workflows',
      message: `the workflow files are ${megabytes(sourceBytes)} in all; at most ${megabytes(MAX_WORKFLOW_SOURCES_BYTES)}`,
    });
  const read = manifest.documents
    ? await readPalDocuments(manifest.documents, contents, documentLimits(options), found)
    : { documents: [], issues: [] };
  problems.push(...read.issues);
  if (problems.length > 0) throw new ManifestError(source, problems);

  // A package without documents hashes as before documents existed, so redeploying it at start
  // (skipIfUnchanged) does not make a new version.
  const hashed =
    read.documents.length > 0
      ? { manifest, files: sources, documents: read.documents.map((d) => d.document) }
      : { manifest, files: sources };
  const contentHash = createHash('sha256').update(JSON.stringify(hashed)).digest('hex');
  return { manifest, files: sources, documents: read.documents, contentHash, source };
}

type FolderFile =
  | { found: true; content: Buffer }
  /** `refused`: the path names something a pal may not hold, said as "is …" (FolderFindings). */
  | { found: false; size?: number; why?: string; refused?: string };

/**
 * Reads a file of the pal folder (`root`, its real path) if it is at most `maxBytes`. The size is
 * checked on the open file before anything is read, so a huge file costs nothing. The path is
 * followed to where it really is, and must stay in the folder: a link to a file outside (or
 * through a linked folder) would deploy, and show on session pages, any file the operator can
 * read. Only a regular file is read; opening without blocking, a FIFO cannot hang the deploy.
 */
async function readFolderFile(root: string, path: string, maxBytes: number): Promise<FolderFile> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { found: false, why: code === 'ENOENT' || code === 'ENOTDIR' ? undefined : code };
  }
  const inside = relative(root, real);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside))
    return { found: false, refused: 'is a link to a file outside the pal folder' };
  let handle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return { found: false, why: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { found: false, refused: 'is not a regular file' };
    if (info.size > maxBytes) return { found: false, size: info.size };
    return { found: true, content: await handle.readFile() };
  } catch (error) {
    return { found: false, why: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  } finally {
    await handle.close();
  }
}

const NOT_FOUND = 'not found in the pal folder';

/** What is wrong with a workflow file as read, if anything. */
function workflowFileProblem(read: FolderFile): string | undefined {
  if (read.found) return isUtf8(read.content) ? undefined : 'is not UTF-8 text';
  if (read.size !== undefined) return 'is larger than 1 MiB';
  return read.refused ?? NOT_FOUND;
}

/**
 * The problems of the workflow and document files a manifest that does not validate names, where
 * the key that names one is itself right: not found, not readable, a workflow file too large or
 * not UTF-8 (a document's content is checked once the manifest is valid).
 */
async function namedFileProblems(
  json: unknown,
  issues: readonly ManifestIssue[],
  read: (path: string, maxBytes: number) => Promise<FolderFile>,
): Promise<ManifestIssue[]> {
  const problems: ManifestIssue[] = [];
  const wrong = (key: string) =>
    issues.some((i) => i.key === key || i.key.startsWith(`${key}.`) || i.key.startsWith(`${key}[`));
  const raw = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const workflows = raw.workflows;
  if (typeof workflows === 'object' && workflows !== null && !Array.isArray(workflows))
    for (const [name, path] of Object.entries(workflows)) {
      const key = `workflows.${name}`;
      if (typeof path !== 'string' || wrong(key)) continue;
      const problem = workflowFileProblem(await read(path, MAX_WORKFLOW_FILE_BYTES));
      if (problem !== undefined) problems.push({ key, message: `file "${path}" ${problem}` });
    }
  if (Array.isArray(raw.documents))
    for (const [i, document] of raw.documents.entries()) {
      const key = `documents[${i}].file`;
      const path = (document as { file?: unknown } | null)?.file;
      if (typeof path !== 'string' || wrong(key)) continue;
      // Whether it is there, not its content: nothing of it is read.
      const found = await read(path, 0);
      const problem =
        found.found || found.size !== undefined ? undefined : (found.refused ?? NOT_FOUND);
      if (problem !== undefined) problems.push({ key, message: `file "${path}" ${problem}` });
    }
  return problems;
}

/**
 * Reads a pal folder: `FOLDER/pal.json` and the workflow and document files it names. Errors
 * name the file (as `FOLDER/pal.json`, the folder as given) and the key.
 */
export async function loadPalPackage(
  folder: string,
  options: PackageOptions = {},
): Promise<PalPackage> {
  const file = join(folder, PAL_MANIFEST_FILE);
  if ((await stat(folder).catch(() => undefined))?.isFile())
    throw new ManifestError(folder, [
      { key: '', message: 'is a file: name the pal folder, the one that holds pal.json' },
    ]);
  const root = await realpath(folder).catch(() => folder);
  const raw = await readFolderFile(root, file, MAX_MANIFEST_BYTES);
  if (!raw.found) {
    const why =
      raw.size !== undefined
        ? `is larger than ${MAX_MANIFEST_BYTES / (1024 * 1024)} MiB`
        : (raw.refused ??
          (raw.why
            ? `cannot be read (${raw.why})`
            : 'not found (a pal folder holds a pal.json manifest)'));
    throw new ManifestError(file, [{ key: '', message: why }]);
  }
  if (!isUtf8(raw.content))
    throw new ManifestError(file, [{ key: '', message: 'is not UTF-8 text' }]);
  let json: unknown;
  try {
    json = JSON.parse(raw.content.toString('utf8'));
  } catch (error) {
    throw new ManifestError(file, [
      { key: '', message: `not valid JSON: ${(error as Error).message}` },
    ]);
  }
  const inFolder = (path: string) => join(folder, ...path.split(/[\\/]/));
  let manifest: PalManifest;
  try {
    manifest = parsePalManifest(json, file);
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    // Every problem at once (docs/pal-format.md): the files of the keys that are right are looked
    // for too, so that a missing one is not news only after the other keys are fixed.
    const more = await namedFileProblems(json, error.issues, (path, maxBytes) =>
      readFolderFile(root, inFolder(path), maxBytes),
    );
    throw new ManifestError(file, [...error.issues, ...manifestTextIssues(json), ...more]);
  }
  const limits = documentLimits(options);

  const files: Record<string, string | Uint8Array> = {};
  const found: FolderFindings = { problems: [], unreadSizes: {}, refused: {} };
  // Files that are missing are left out: assembling the package reports them, with the rest.
  for (const [name, path] of Object.entries(manifest.workflows ?? {})) {
    const read = await readFolderFile(root, inFolder(path), MAX_WORKFLOW_FILE_BYTES);
    const problem = workflowFileProblem(read);
    if (read.found && problem === undefined) files[path] = read.content.toString('utf8');
    else if (problem !== undefined && problem !== NOT_FOUND)
      found.problems.push({ key: `workflows.${name}`, message: `file "${path}" ${problem}` });
  }
  for (const document of manifest.documents ?? []) {
    const read = await readFolderFile(root, inFolder(document.file), limits.maxBytes);
    if (read.found) files[document.file] = read.content;
    else if (read.size !== undefined) found.unreadSizes[document.file] = read.size;
    else if (read.refused) found.refused[document.file] = read.refused;
  }
  return assemblePalPackage(json, manifest, files, file, options, found);
}
