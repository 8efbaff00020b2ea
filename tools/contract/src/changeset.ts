/**
 * Changesets and the contract: the changeset `--write-changeset` writes for the four packages'
 * fixed group, the bump the pending changesets already ask for (the gate compares them), and
 * the rule that a package's CHANGELOG names every schema change (the gate and release:dry).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import readChangesets from '@changesets/read';
import { largest, type Bump, type Change, type ChangeBump, type DiffReport } from './change.js';
import { ContractInputError } from './input-error.js';

/** The changesets `fixed` group (.changeset/config.json): one contract, one version. */
export const CONTRACT_PACKAGES = [
  '@pal-workflow/types',
  '@pal-workflow/validators',
  '@pal-workflow/server-skeleton',
  '@pal-workflow/client',
] as const;

export function changesetText(report: DiffReport & { bump: ChangeBump }): string {
  const header = CONTRACT_PACKAGES.map((p) => `'${p}': ${report.bump}`).join('\n');
  const lines = report.changes.map((c) => `- ${c.bump}: \`${c.path}\`: ${c.reason}`);
  return `---\n${header}\n---\n\nContract changes (${report.bump}), found by \`npm run contract:diff\`:\n\n${lines.join('\n')}\n`;
}

/**
 * Writes `.changeset/contract-<hash>.md`; the name follows the change list, so running it twice
 * for the same changes rewrites one file instead of adding a second. Returns the path.
 */
export function writeChangeset(root: string, report: DiffReport): string | undefined {
  if (report.bump === 'none') return undefined;
  const text = changesetText(report as DiffReport & { bump: ChangeBump });
  const id = createHash('sha256').update(text).digest('hex').slice(0, 8);
  const path = join(root, '.changeset', `contract-${id}.md`);
  writeFileSync(path, text);
  return path;
}

/** What both the gate and release:dry tell the author of a changeset that falls short. */
export const WRITE_CHANGESET = 'npm run contract:diff -- --write-changeset';

/**
 * The changes a package's CHANGELOG does not name by their path. release:dry applies it to the
 * CHANGELOGs `changeset version` wrote; contract:check to what they will be written from (the
 * CHANGELOG as it is and the pending changesets' text), so `npm test` fails where CI's release
 * dry run would.
 */
export function unnamedChanges(changes: readonly Change[], changelog: string): Change[] {
  return changes.filter((c) => !changelog.includes(c.path));
}

/** One line for a CHANGELOG that leaves changes out, e.g. `packages/types/CHANGELOG.md does not name …`. */
export function unnamedText(file: string, missing: readonly Change[]): string {
  return `${file} does not name ${missing.length} schema change(s), e.g. ${missing[0]!.path}`;
}

/** A contract package's folder: `@pal-workflow/types` is packages/types. */
export function packageFolder(name: (typeof CONTRACT_PACKAGES)[number]): string {
  return `packages/${name.slice('@pal-workflow/'.length)}`;
}

/**
 * The gate's half of the naming rule: for each of the four packages, the CHANGELOG it has now and
 * the text of the pending changesets that release it must together name every change, as the
 * CHANGELOG after `changeset version` must for release:dry. One line per package that falls short.
 */
export function changelogGaps(
  root: string,
  changes: readonly Change[],
  pending: PendingChangesets,
): string[] {
  return CONTRACT_PACKAGES.flatMap((name) => {
    const file = `${packageFolder(name)}/CHANGELOG.md`;
    const now = existsSync(join(root, file)) ? readFileSync(join(root, file), 'utf8') : '';
    const missing = unnamedChanges(changes, `${now}\n${pending.summaries[name]}`);
    return missing.length ? [unnamedText(file, missing)] : [];
  });
}

export interface PendingChangesets {
  /** The largest bump any pending changeset asks for one of the four packages. */
  bump: Bump;
  files: string[];
  /** The text of the pending changesets that release each package: its next CHANGELOG entry. */
  summaries: Record<(typeof CONTRACT_PACKAGES)[number], string>;
}

export async function pendingChangesets(root: string): Promise<PendingChangesets> {
  const summaries = (texts: (name: string) => string[]) =>
    Object.fromEntries(
      CONTRACT_PACKAGES.map((name) => [name, texts(name).join('\n')]),
    ) as PendingChangesets['summaries'];
  if (!existsSync(join(root, '.changeset')))
    return { bump: 'none', files: [], summaries: summaries(() => []) };
  let changesets: Awaited<ReturnType<typeof readChangesets>>;
  try {
    changesets = await readChangesets(root);
  } catch (e) {
    throw new ContractInputError(
      `a pending changeset in .changeset/ cannot be read: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  const contract = new Set<string>(CONTRACT_PACKAGES);
  const asking = changesets.filter((c) => c.releases.some((r) => contract.has(r.name)));
  return {
    bump: largest(
      asking.flatMap((c) => c.releases.filter((r) => contract.has(r.name)).map((r) => r.type)),
    ),
    files: asking.map((c) => `.changeset/${c.id}.md`),
    summaries: summaries((name) =>
      asking.filter((c) => c.releases.some((r) => r.name === name)).map((c) => c.summary),
    ),
  };
}
