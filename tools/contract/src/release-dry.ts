/**
 * `npm run release:dry`: what `changeset version` and a publish would give, proven in a scratch
 * copy of the work tree, which is thrown away (the repository is never changed):
 *
 * 1. the contract diff against the base, as the changesets should describe it;
 * 2. `changeset version`: the four packages move together and get CHANGELOGs;
 * 3. `npm run generate`: the bundled OpenAPI's info.version follows the packages' version;
 * 4. tools/pack-smoke: build, pack, install the tarballs into a fresh project, type-check, run;
 * 5. publint and @arethetypeswrong/cli on the tarballs;
 * 6. every CHANGELOG names every schema change, and info.version equals the version.
 *
 * Exit 0 when all hold, 1 when a check fails, 2 on bad input (as contract:diff).
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkoutSchemas, resolveBase } from './base.js';
import type { DiffReport } from './change.js';
import { unnamedChanges, unnamedText, WRITE_CHANGESET } from './changeset.js';
import { diffContracts } from './diff.js';
import { ContractInputError } from './input-error.js';
import { loadContract } from './load.js';
import { REPOSITORY_ROOT } from './paths.js';

export const PACKAGES = ['types', 'validators', 'server-skeleton', 'client'] as const;

const step = (text: string) => console.log(`\n== ${text}`);

const ENV = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };

/** A long step whose progress shows as it goes. */
function stream(command: string, args: string[], cwd: string): void {
  console.log(`$ ${command} ${args.join(' ')}`);
  execFileSync(command, args, { cwd, stdio: 'inherit', env: ENV });
}

function run(command: string, args: string[], cwd: string, quiet = false): string {
  console.log(`$ ${command} ${args.join(' ')}`);
  try {
    const out = execFileSync(command, args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
      env: ENV,
    });
    if (!quiet && out.trim()) console.log(out.trimEnd());
    return out;
  } catch (e) {
    const out = (e as { stdout?: string }).stdout;
    if (out?.trim()) console.log(out.trimEnd());
    throw e;
  }
}

/**
 * The work tree as it is (tracked and new files, not ignored ones), with node_modules made of
 * links into the repository's, except the workspace links, which point into the copy: a fresh
 * `npm ci` would take minutes and prove nothing the lockfile check does not.
 */
function scratchCopy(root: string): string {
  const scratch = mkdtempSync(join(tmpdir(), 'pal-release-dry-'));
  try {
    fillScratch(root, scratch);
  } catch (e) {
    rmSync(scratch, { recursive: true, force: true });
    throw e;
  }
  return scratch;
}

function fillScratch(root: string, scratch: string): void {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    // Regular files only: a deleted file is not there, and node_modules is linked below.
    .filter((f) => f && !f.split('/').includes('node_modules'))
    .filter((f) => existsSync(join(root, f)) && lstatSync(join(root, f)).isFile());
  for (const file of files) {
    mkdirSync(dirname(join(scratch, file)), { recursive: true });
    cpSync(join(root, file), join(scratch, file));
  }
  const modules = join(scratch, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry === '@pal-workflow') continue;
    symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  }
  mkdirSync(join(modules, '@pal-workflow'));
  for (const link of readdirSync(join(root, 'node_modules/@pal-workflow'))) {
    const target = realpathSync(join(root, 'node_modules/@pal-workflow', link));
    const workspace = target.slice(root.length + 1);
    symlinkSync(join(scratch, workspace), join(modules, '@pal-workflow', link));
    if (existsSync(join(root, workspace, 'node_modules')))
      symlinkSync(join(root, workspace, 'node_modules'), join(scratch, workspace, 'node_modules'));
  }
}

function versionOf(root: string, name: string): string {
  const manifest = JSON.parse(
    readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'),
  ) as { version: string };
  return manifest.version;
}

function contractDiff(root: string): DiffReport | undefined {
  const base = resolveBase(root, process.env.CONTRACT_BASE || undefined);
  if (!base) {
    console.log(
      'No base to compare with (no release tag, no main branch): no schema changes to check.',
    );
    return undefined;
  }
  const folder = checkoutSchemas(root, base);
  try {
    const report = diffContracts(
      loadContract(folder, `base ${base.ref}`),
      loadContract(root, 'the work tree'),
    );
    console.log(
      `Against ${base.ref} (${base.reason}): bump ${report.bump}, ${report.changes.length} change(s).`,
    );
    return report;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

export async function releaseDry(root: string = REPOSITORY_ROOT): Promise<string[]> {
  const failures: string[] = [];
  step('The contract diff against the base');
  const report = contractDiff(root);

  step('A scratch copy of the work tree');
  const scratch = scratchCopy(root);
  console.log(scratch);
  try {
    const before = versionOf(scratch, 'types');
    step('changeset version');
    run('npx', ['changeset', 'version'], scratch);
    const versions = PACKAGES.map((p) => versionOf(scratch, p));
    const version = versions[0]!;
    console.log(
      `Versions: ${before} → ${PACKAGES.map((p, i) => `${p} ${versions[i]}`).join(', ')}`,
    );
    if (new Set(versions).size !== 1)
      failures.push(`the four packages do not share one version: ${versions.join(', ')}`);
    if (version === before) console.log('No pending changeset: the version stays.');

    step('npm run generate (info.version follows the packages)');
    run('npm', ['run', 'generate', '--silent'], scratch, true);
    const openapi = readFileSync(
      join(scratch, 'packages/server-skeleton/src/generated/openapi.gen.ts'),
      'utf8',
    );
    const infoVersion = /info: \{[^}]*?version: '([^']+)'/s.exec(openapi)?.[1];
    console.log(`Bundled OpenAPI info.version: ${infoVersion}`);
    if (infoVersion !== version)
      failures.push(
        `the bundled OpenAPI's info.version is ${infoVersion}, the packages' ${version}`,
      );

    step(
      'Build, pack, install into a fresh project, type-check and run the consumer (tools/pack-smoke)',
    );
    try {
      stream('npx', ['tsx', 'tools/pack-smoke/src/main.ts'], scratch);
    } catch {
      // A consumer that no longer compiles is what the packages' users would meet: said with
      // the other failures, its compiler's errors above.
      failures.push(
        'the consumer of the packed packages (tools/pack-smoke/src/consumer) failed: see its output above',
      );
    }

    step('publint and @arethetypeswrong/cli on the tarballs');
    const tarballs = join(scratch, '.release-dry-tarballs');
    mkdirSync(tarballs);
    for (const name of PACKAGES)
      run(
        'npm',
        ['pack', '--silent', '--pack-destination', tarballs],
        join(scratch, 'packages', name),
      );
    const bin = (tool: string) => join(root, 'node_modules/.bin', tool);
    for (const tarball of readdirSync(tarballs).sort()) {
      const path = join(tarballs, tarball);
      try {
        run(bin('publint'), ['run', path, '--strict'], scratch);
      } catch {
        failures.push(`publint: ${tarball}`);
      }
      try {
        run(
          bin('attw'),
          [path, '--profile', 'esm-only', '--format', 'ascii', '--no-emoji', '--no-color'],
          scratch,
        );
      } catch {
        failures.push(`attw: ${tarball}`);
      }
    }

    step('CHANGELOGs name the schema changes');
    const changelog = join(scratch, 'packages/types/CHANGELOG.md');
    if (version !== before && existsSync(changelog)) {
      const text = readFileSync(changelog, 'utf8');
      const start = text.indexOf(`## ${version}`);
      const end = text.indexOf('\n## ', start + 1);
      console.log(
        `packages/types/CHANGELOG.md, ${version}:\n${text.slice(start, end < 0 ? undefined : end).trimEnd()}\n`,
      );
    }
    for (const name of PACKAGES) {
      const file = join(scratch, 'packages', name, 'CHANGELOG.md');
      const changelog = existsSync(file) ? readFileSync(file, 'utf8') : '';
      if (version !== before && !changelog.includes(`## ${version}`))
        failures.push(`packages/${name}/CHANGELOG.md has no section for ${version}`);
      const missing = unnamedChanges(report?.changes ?? [], changelog);
      if (missing.length)
        failures.push(
          `${unnamedText(`packages/${name}/CHANGELOG.md`, missing)} (write the changeset with \`${WRITE_CHANGESET}\`)`,
        );
      else
        console.log(
          `packages/${name}/CHANGELOG.md: ${report?.changes.length ?? 0} schema change(s) named`,
        );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return failures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const failures = await releaseDry();
    if (failures.length) {
      console.error(`\nRelease dry run failed:\n${failures.map((f) => `  ${f}`).join('\n')}`);
      process.exitCode = 1;
    } else console.log('\nRelease dry run passed.');
  } catch (e) {
    if (e instanceof ContractInputError) {
      console.error(`release:dry: ${e.message}`);
      process.exitCode = 2;
    } else {
      console.error(`release:dry: ${(e as Error).message.split('\n')[0]}`);
      process.exitCode = 1;
    }
  }
}
