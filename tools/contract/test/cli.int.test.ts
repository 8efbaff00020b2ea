/**
 * contract:diff against real git repositories: a temporary one holding a copy of schemas/ and the
 * changesets config (the gate, --json, --write-changeset, bad bases, a shallow clone), and the
 * CLI as a process on this repository (exit codes, one-line errors).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../src/main.js';
import { REPOSITORY_ROOT } from '../src/paths.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

const PAL = 'schemas/xsd/pal.xsd';
const OPTIONAL_MEMBER = [
  '<xs:element name="shell" type="xs:boolean"/>',
  '<xs:element name="shell" type="xs:boolean"/>\n      <xs:element name="weight" type="xs:int" minOccurs="0"/>',
] as const;
const ENUM_VALUE = [
  '<xs:enumeration value="CHECKBOXCHECKED"/>',
  '<xs:enumeration value="CHECKBOXCHECKED"/>\n      <xs:enumeration value="DATE"/>',
] as const;
const REQUIRED_MEMBER = [
  '<xs:element name="weight" type="xs:int" minOccurs="0"/>',
  '<xs:element name="weight" type="xs:int"/>',
] as const;

let work: string;
let repo: string;
const edit = (file: string, [from, to]: readonly [string, string]) => {
  const text = readFileSync(join(repo, file), 'utf8');
  if (!text.includes(from)) throw new Error(`edit does not apply: ${from}`);
  writeFileSync(join(repo, file), text.replace(from, to));
};

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'contract-cli-'));
  repo = join(work, 'repo');
  mkdirSync(join(repo, '.changeset'), { recursive: true });
  cpSync(join(REPOSITORY_ROOT, 'schemas'), join(repo, 'schemas'), { recursive: true });
  cpSync(join(REPOSITORY_ROOT, '.changeset/config.json'), join(repo, '.changeset/config.json'));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.email', 'test@example.invalid');
  git(repo, 'config', 'user.name', 'test');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'the contract');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('contract:diff in a git repository', () => {
  it('finds no change against main when the schemas are as committed, and the gate passes', async () => {
    const json = await run(['--json'], repo);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout[0]!)).toEqual({ bump: 'none', changes: [] });
    const check = await run(['--check'], repo);
    expect(check.code).toBe(0);
    expect(check.stdout[0]).toMatch(
      /^Contract: no change against main \([0-9a-f]{12}, the main branch\)/,
    );
  });

  it('classifies a new optional member as minor, in the exact --json shape', async () => {
    edit(PAL, OPTIONAL_MEMBER);
    const result = await run(['--json'], repo);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout[0]!)).toEqual({
      bump: 'minor',
      changes: [
        {
          bump: 'minor',
          kind: 'member-added-optional',
          path: 'pal.xsd#PalInfo.weight',
          reason: 'new optional member weight (xs:int, optional)',
        },
      ],
    });
  });

  it('fails the gate without a changeset, printing the report and the command', async () => {
    const result = await run(['--check'], repo);
    expect(result.code).toBe(1);
    expect(result.stdout.join('\n')).toContain('minor  pal.xsd#PalInfo.weight');
    expect(result.stderr).toEqual([
      'Contract gate failed: the schemas changed (minor) but no pending changeset names the contract packages.',
      'Write one with: npm run contract:diff -- --write-changeset',
    ]);
  });

  it('writes the changeset for the fixed group, after which the gate passes', async () => {
    const written = await run(['--write-changeset'], repo);
    expect(written.code).toBe(0);
    const files = readdirSync(join(repo, '.changeset')).filter((f) => f.startsWith('contract-'));
    expect(files).toHaveLength(1);
    const text = readFileSync(join(repo, '.changeset', files[0]!), 'utf8');
    expect(text).toContain("'@pal-workflow/types': minor\n'@pal-workflow/validators': minor");
    expect(text).toContain("'@pal-workflow/client': minor\n---");
    expect(text).toContain('- minor: `pal.xsd#PalInfo.weight`: new optional member weight');
    // Written twice for the same changes: still one file.
    await run(['--write-changeset'], repo);
    expect(readdirSync(join(repo, '.changeset')).filter((f) => f.startsWith('contract-'))).toEqual(
      files,
    );
    const check = await run(['--check'], repo);
    expect(check.code).toBe(0);
    expect(check.stdout.at(-1)).toMatch(/pending changesets ask for minor .*at least the minor/);
  });

  it('fails the gate again when the change grows past what the changeset asks', async () => {
    edit(PAL, REQUIRED_MEMBER);
    const result = await run(['--check'], repo);
    expect(result.code).toBe(1);
    expect(result.stderr[0]).toMatch(
      /^Contract gate failed: the schemas changed \(major\) but the pending changesets ask only for minor/,
    );
  });

  it('fails the gate, as release:dry would, when the pending changesets ask enough but leave a change unnamed', async () => {
    // A major changeset about something else pays for the bump; release:dry still wants
    // FieldType.DATE in the CHANGELOGs, so the gate in npm test must fail too.
    edit(PAL, ENUM_VALUE);
    writeFileSync(
      join(repo, '.changeset/console-rewrite.md'),
      "---\n'@pal-workflow/types': major\n'@pal-workflow/validators': major\n'@pal-workflow/server-skeleton': major\n'@pal-workflow/client': major\n---\n\nThe console is rewritten.\n",
    );
    const result = await run(['--check'], repo);
    expect(result.code).toBe(1);
    expect(result.stderr[0]).toMatch(
      /^Contract gate failed: the pending changesets ask for major \(\.changeset\/\S+\.md, \.changeset\/\S+\.md\), but the CHANGELOGs they become would not name every schema change, which npm run release:dry requires:$/,
    );
    expect(result.stderr.slice(1)).toEqual([
      '  packages/types/CHANGELOG.md does not name 1 schema change(s), e.g. pal.xsd#FieldType.DATE',
      '  packages/validators/CHANGELOG.md does not name 1 schema change(s), e.g. pal.xsd#FieldType.DATE',
      '  packages/server-skeleton/CHANGELOG.md does not name 1 schema change(s), e.g. pal.xsd#FieldType.DATE',
      '  packages/client/CHANGELOG.md does not name 1 schema change(s), e.g. pal.xsd#FieldType.DATE',
      'Write one with: npm run contract:diff -- --write-changeset',
    ]);
    expect((await run(['--write-changeset'], repo)).code).toBe(0);
    const check = await run(['--check'], repo);
    expect(check.code).toBe(0);
    expect(check.stdout.at(-1)).toMatch(
      /ask for major .*at least the major .*, and name every change\.$/,
    );
  });

  it('compares with the last release tag when there is one', async () => {
    git(repo, 'tag', '@pal-workflow/types@0.1.0', 'main');
    const result = await run([], repo);
    expect(result.stdout[0]).toMatch(
      /against @pal-workflow\/types@0\.1\.0 \(.*the last release tag\)/,
    );
    git(repo, 'tag', '-d', '@pal-workflow/types@0.1.0');
  });
});

describe('the default base on a branch', () => {
  it('is where the branch left main, so what main gained since is not reported', async () => {
    git(repo, 'checkout', '-q', '-f', '-b', 'topic', 'main');
    git(repo, 'checkout', '-q', 'main');
    edit(PAL, OPTIONAL_MEMBER);
    git(repo, 'commit', '-q', '-am', 'main gains weight');
    git(repo, 'checkout', '-q', 'topic');
    const result = await run(['--json'], repo);
    expect(JSON.parse(result.stdout[0]!)).toEqual({ bump: 'none', changes: [] });
    expect((await run([], repo)).stdout[0]).toMatch(/where this branch left the main branch/);
    // Against main's tip, the topic branch lacks what main gained.
    const tip = await run(['--json', '--base', 'main'], repo);
    expect(JSON.parse(tip.stdout[0]!).bump).toBe('major');
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'reset', '-q', '--hard', 'HEAD~1');
  });
});

describe('bad input: one line, exit 2', () => {
  it('a base that does not exist', async () => {
    const result = await run(['--base', 'no-such-ref'], repo);
    expect(result).toMatchObject({
      code: 2,
      stderr: ['contract:diff: base no-such-ref does not exist in this repository'],
    });
  });

  it('a base whose schemas do not load', async () => {
    git(repo, 'checkout', '-q', '-b', 'broken', 'main');
    writeFileSync(join(repo, PAL), '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">');
    git(repo, 'commit', '-q', '-am', 'broken');
    git(repo, 'checkout', '-q', '-f', 'main');
    const result = await run(['--base', 'broken'], repo);
    expect(result.code).toBe(2);
    expect(result.stderr).toHaveLength(1);
    // Where the file stops being XML, and nothing the OpenAPI then misses in it.
    expect(result.stderr[0]).toBe(
      "contract:diff: the schemas of base broken do not load: XSD000 pal.xsd:1:1: not well-formed XML: Unclosed tag 'xs:schema'.",
    );
  });

  it('a shallow clone without the base commit; the gate without any base is skipped, saying so', async () => {
    const first = git(repo, 'rev-parse', 'main');
    git(repo, 'checkout', '-q', '-b', 'feature', 'main');
    edit(PAL, OPTIONAL_MEMBER);
    git(repo, 'commit', '-q', '-am', 'weight');
    const shallow = join(work, 'shallow');
    git(work, 'clone', '-q', '--depth', '1', '--branch', 'feature', `file://${repo}`, shallow);

    const missing = await run(['--base', first], shallow);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toEqual([
      `contract:diff: base ${first} is not in this clone (a shallow clone?): fetch it, e.g. \`git fetch --deepen=50 origin\` or \`git fetch --tags origin main\``,
    ]);
    const noDefault = await run([], shallow);
    expect(noDefault.code).toBe(2);
    expect(noDefault.stderr[0]).toMatch(/no base to compare with: .*pass --base REF$/);
    const gate = await run(['--check'], shallow);
    expect(gate.code).toBe(0);
    expect(gate.stdout[0]).toMatch(/^Contract gate skipped: no base to compare with/);
  });

  it('as a process: no stack trace, exit 2', () => {
    const result = spawnSync('npx', ['tsx', 'src/main.ts', '--base', 'no-such-ref'], {
      cwd: join(REPOSITORY_ROOT, 'tools/contract'),
      encoding: 'utf8',
    });
    expect(result.status).toBe(2);
    const lines = result.stderr.split('\n').filter((l) => l && !l.startsWith('npm warn'));
    expect(lines).toEqual(['contract:diff: base no-such-ref does not exist in this repository']);
    const unknown = spawnSync('npx', ['tsx', 'src/main.ts', '--frobnicate'], {
      cwd: join(REPOSITORY_ROOT, 'tools/contract'),
      encoding: 'utf8',
    });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("contract:diff: Unknown option '--frobnicate'");
  });
});
