/**
 * Changesets and the contract: the changeset `--write-changeset` writes for the four packages'
 * fixed group, and the bump the pending changesets already ask for (the gate compares them).
 */
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import readChangesets from '@changesets/read';
import { largest, type Bump, type ChangeBump, type DiffReport } from './change.js';
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

export interface PendingChangesets {
  /** The largest bump any pending changeset asks for one of the four packages. */
  bump: Bump;
  files: string[];
}

export async function pendingChangesets(root: string): Promise<PendingChangesets> {
  if (!existsSync(join(root, '.changeset'))) return { bump: 'none', files: [] };
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
  };
}
