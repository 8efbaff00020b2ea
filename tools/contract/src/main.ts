/**
 * `npm run contract:diff -- [--base REF] [--json] [--write-changeset] [--check]`
 *
 * Loads `schemas/` at the base (the last release tag, else main) and in the work tree through
 * the generator's loaders, lists every change with its bump, and with `--check` is the CI gate:
 * exit 1 when the schemas changed and no pending changeset asks for at least that bump, or the
 * pending changesets leave a change unnamed (release:dry's rule for the CHANGELOGs).
 * Exit codes: 0 fine, 1 the gate failed, 2 bad input (one line on stderr).
 */
import { parseArgs } from 'node:util';
import { rmSync } from 'node:fs';
import { REPOSITORY_ROOT } from './paths.js';
import { checkoutSchemas, resolveBase, schemasDiffer } from './base.js';
import { rank, type DiffReport } from './change.js';
import { changelogGaps, pendingChangesets, WRITE_CHANGESET, writeChangeset } from './changeset.js';
import { diffContracts } from './diff.js';
import { ContractInputError } from './input-error.js';
import { loadContract } from './load.js';
import { formatReport } from './report.js';

const USAGE = 'usage: npm run contract:diff -- [--base REF] [--json] [--write-changeset] [--check]';

export interface RunResult {
  code: number;
  stdout: string[];
  stderr: string[];
}

export async function run(argv: string[], root: string = REPOSITORY_ROOT): Promise<RunResult> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        base: { type: 'string' },
        json: { type: 'boolean', default: false },
        'write-changeset': { type: 'boolean', default: false },
        check: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    const askedBase = values.base ?? (process.env.CONTRACT_BASE || undefined);
    const base = resolveBase(root, askedBase);
    if (!base) {
      const why =
        'no base to compare with: no release tag (@pal-workflow/types@*) and no main branch in this clone';
      if (values.check) {
        // A fresh shallow CI checkout: the gate cannot see the base, and says so loudly instead
        // of failing every build; CONTRACT_BASE or a deeper fetch turns it on.
        stdout.push(
          `Contract gate skipped: ${why}. Fetch one (\`git fetch --tags origin main\`) or set CONTRACT_BASE.`,
        );
        return { code: 0, stdout, stderr };
      }
      throw new ContractInputError(`${why}; pass --base REF`);
    }
    const folder = checkoutSchemas(root, base);
    let report: DiffReport;
    try {
      report = diffContracts(
        loadContract(folder, `base ${base.ref}`),
        loadContract(root, 'the work tree'),
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }

    if (values.json) stdout.push(JSON.stringify(report));
    else stdout.push(formatReport(report, base));

    if (values['write-changeset']) {
      const written = writeChangeset(root, report);
      (values.json ? stderr : stdout).push(
        written
          ? `Wrote ${written.slice(root.length + 1)} (${report.bump} for the four packages).`
          : 'No contract change: no changeset written.',
      );
    }

    if (values.check) {
      if (report.bump === 'none') {
        if (schemasDiffer(root, base.commit))
          stdout.push('schemas/ differs from the base, but not in anything the contract carries.');
        return { code: 0, stdout, stderr };
      }
      const pending = await pendingChangesets(root);
      const write = `Write one with: ${WRITE_CHANGESET}${askedBase ? ` --base ${askedBase}` : ''}`;
      if (rank(pending.bump) < rank(report.bump)) {
        stderr.push(
          `Contract gate failed: the schemas changed (${report.bump}) but ${
            pending.files.length
              ? `the pending changesets ask only for ${pending.bump} (${pending.files.join(', ')})`
              : 'no pending changeset names the contract packages'
          }.`,
          write,
        );
        return { code: 1, stdout, stderr };
      }
      // Enough of a bump is not enough for the release: release:dry wants every change named in
      // the CHANGELOGs the changesets become, and the gate holds the same rule.
      const gaps = changelogGaps(root, report.changes, pending);
      if (gaps.length) {
        stderr.push(
          `Contract gate failed: the pending changesets ask for ${pending.bump} (${pending.files.join(', ')}), but the CHANGELOGs they become would not name every schema change, which npm run release:dry requires:`,
          ...gaps.map((g) => `  ${g}`),
          write,
        );
        return { code: 1, stdout, stderr };
      }
      stdout.push(
        `Contract gate: pending changesets ask for ${pending.bump} (${pending.files.join(', ')}), at least the ${report.bump} the schemas need, and name every change.`,
      );
      return { code: 0, stdout, stderr };
    }
    return { code: 0, stdout, stderr };
  } catch (e) {
    if (e instanceof ContractInputError) {
      stderr.push(`contract:diff: ${e.message}`);
      return { code: 2, stdout, stderr };
    }
    if ((e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      stderr.push(`contract:diff: ${(e as Error).message}. ${USAGE}`);
      return { code: 2, stdout, stderr };
    }
    throw e;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run(process.argv.slice(2));
  if (result.stdout.length) console.log(result.stdout.join('\n'));
  if (result.stderr.length) console.error(result.stderr.join('\n'));
  process.exitCode = result.code;
}
