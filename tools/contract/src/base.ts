/**
 * The base of a contract diff: which commit to compare with, and its `schemas/` copied out of
 * git into a temporary folder, so both sides go through the same loaders as files.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ContractInputError } from './input-error.js';

/** changesets tags each release `<package>@<version>`; one package of the fixed group names it. */
export const RELEASE_TAG_PATTERN = '@pal-workflow/types@*';
export const MAIN_BRANCHES = ['main', 'origin/main'];

export interface ResolvedBase {
  /** What the user asked for or what was chosen by default, e.g. `main`. */
  ref: string;
  commit: string;
  /** Why this base: `--base`, `the last release tag`, `the main branch`. */
  reason: string;
}

function git(root: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

function tryGit(root: string, args: string[]): string | undefined {
  try {
    return git(root, args).trim();
  } catch {
    return undefined;
  }
}

function isShallow(root: string): boolean {
  return tryGit(root, ['rev-parse', '--is-shallow-repository']) === 'true';
}

/** The commit a ref names, with a one-line reason when there is none. */
export function resolveCommit(root: string, ref: string): string {
  if (tryGit(root, ['rev-parse', '--is-inside-work-tree']) !== 'true')
    throw new ContractInputError(
      `${root} is not a git work tree: there is no base to compare with`,
    );
  const commit = tryGit(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (commit) return commit;
  const named = tryGit(root, ['rev-parse', '--verify', '--quiet', ref]);
  if (named || isShallow(root))
    throw new ContractInputError(
      `base ${ref} is not in this clone (a shallow clone?): fetch it, e.g. \`git fetch --deepen=50 origin\` or \`git fetch --tags origin main\``,
    );
  throw new ContractInputError(`base ${ref} does not exist in this repository`);
}

/**
 * `--base REF` when given, taken as it is; else the nearest release tag reachable from HEAD;
 * else the main branch, where HEAD's branch left it (the merge base). Undefined when there is none of them (a fresh or shallow clone without tags and main).
 */
export function resolveBase(root: string, ref: string | undefined): ResolvedBase | undefined {
  if (ref !== undefined) {
    if (!ref.trim()) throw new ContractInputError('--base needs a git ref, e.g. --base main');
    return { ref, commit: resolveCommit(root, ref), reason: '--base' };
  }
  const tag = tryGit(root, ['describe', '--tags', '--abbrev=0', '--match', RELEASE_TAG_PATTERN]);
  if (tag) return { ref: tag, commit: resolveCommit(root, tag), reason: 'the last release tag' };
  for (const branch of MAIN_BRANCHES) {
    const tip = tryGit(root, ['rev-parse', '--verify', '--quiet', `${branch}^{commit}`]);
    if (!tip) continue;
    // Where this branch left main: what main gained since is not this branch's change.
    const forked = tryGit(root, ['merge-base', 'HEAD', tip]);
    return forked && forked !== tip
      ? { ref: branch, commit: forked, reason: 'where this branch left the main branch' }
      : { ref: branch, commit: tip, reason: 'the main branch' };
  }
  return undefined;
}

/** The files under `schemas/` at a commit, written into a fresh folder; the caller removes it. */
export function checkoutSchemas(root: string, base: ResolvedBase): string {
  let listing: string;
  try {
    listing = git(root, ['ls-tree', '-r', '--name-only', base.commit, '--', 'schemas']);
  } catch {
    throw new ContractInputError(
      `the tree of base ${base.ref} (${base.commit.slice(0, 12)}) is not in this clone (a shallow clone?): fetch it first`,
    );
  }
  const files = listing.split('\n').filter(Boolean);
  if (files.length === 0)
    throw new ContractInputError(`base ${base.ref} has no schemas/ folder: no contract to compare`);
  const folder = mkdtempSync(join(tmpdir(), 'pal-contract-base-'));
  try {
    for (const file of files) {
      const text = execFileSync('git', ['show', `${base.commit}:${file}`], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 64 * 1024 * 1024,
      });
      mkdirSync(dirname(join(folder, file)), { recursive: true });
      writeFileSync(join(folder, file), upgradeLegacySchema(file, text.toString('utf8')));
    }
  } catch (e) {
    rmSync(folder, { recursive: true, force: true });
    if (e instanceof ContractInputError) throw e;
    throw new ContractInputError(
      `the schemas of base ${base.ref} cannot be read from git (a shallow clone?): ${firstLine(e)}`,
    );
  }
  return folder;
}

/**
 * Brings a base's schema file up to what today's loaders read, where only the way the contract is
 * written changed, not the contract: before `x-roots` existed, the roots `services` and `user`
 * were the generator's built-in defaults.
 */
export function upgradeLegacySchema(file: string, text: string): string {
  if (file !== 'schemas/openapi/operations.yaml' || /^x-roots:/m.test(text)) return text;
  return `x-roots:\n  service: services\n  user: user\n${text}`;
}

/** The differing paths under schemas/ between a commit and the work tree (tracked or not). */
export function schemasDiffer(root: string, commit: string): boolean {
  const changed = tryGit(root, ['diff', '--name-only', commit, '--', 'schemas']);
  const untracked = tryGit(root, ['ls-files', '--others', '--exclude-standard', '--', 'schemas']);
  return Boolean(changed) || Boolean(untracked);
}

export function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n').find((l) => l.trim()) ?? text;
}
