// Deploy's check that a pal's modules can run (workflows/deploy-check.ts): a pal whose modules the
// service never runs is refused, one that runs but would answer NO_WORKFLOW is named in a warning.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildPalPackage, loadPalPackage } from '../domain/pal-manifest.js';
import { checkPalWorkflows, ENTRY_EXPORTS, moduleProblems } from './deploy-check.js';
import { OPERATIONS } from './operations.js';

const examples = fileURLToPath(new URL('../../../../examples/pals/', import.meta.url));

const problems = async (manifest: object, files: Record<string, string>) =>
  moduleProblems(await buildPalPackage({ id: 'p', ...manifest }, files));

describe("deploy's check that a pal's modules can run", () => {
  it("knows the exports the operations' table calls, and an entry's enter", () => {
    for (const module of ['transaction', 'console'] as const)
      expect(new Set(ENTRY_EXPORTS[module])).toEqual(
        new Set([
          ...Object.values(OPERATIONS)
            .filter((operation) => operation.module === module)
            .map((operation) => operation.exportName),
          'enter',
        ]),
      );
  });

  it('refuses a pal none of whose modules the service runs, naming the names that run', async () => {
    // Before: docs/pal-format.md's own example deployed without a word, and every T6 answered
    // NO_WORKFLOW.
    const { errors, warnings } = await problems(
      {
        modes: { transaction: true },
        workflows: { main: 'workflows/main.js', approve: 'workflows/approve.js' },
      },
      {
        'workflows/main.js': 'export function runWorkflow() {}',
        'workflows/approve.js': 'export function approve() {}',
      },
    );
    expect(errors).toEqual([
      {
        key: 'workflows',
        message:
          'no module the service runs ("main", "approve"): it runs "transaction" in a transaction-mode pal, ' +
          '"console" in a console-mode pal and "user" in any; other modules run only when these import ' +
          'or call them (docs/workflows.md, "Which module, which export")',
      },
    ]);
    expect(warnings).toEqual([]);
    const modeless = await problems(
      { workflows: { transaction: 't.js' } },
      { 't.js': 'export function runWorkflow() {}' },
    );
    expect(modeless.errors).toEqual([
      {
        key: 'workflows',
        message: expect.stringContaining(
          '; "transaction" runs only when modes.transaction is true;',
        ) as string,
      },
    ]);
  });

  it('refuses a pal whose modules that run export nothing', async () => {
    const { errors } = await problems(
      { modes: { console: true }, workflows: { console: 'c.js', lib: 'lib.js' } },
      { 'c.js': "import { x } from './lib.js'; x();", 'lib.js': 'export function x() {}' },
    );
    expect(errors).toEqual([
      {
        key: 'workflows',
        message: '"console" exports nothing: no run of this pal can call anything',
      },
    ]);
  });

  it('warns of a module that exports none of the functions the engine calls, and of a mode without its module', async () => {
    const { errors, warnings } = await problems(
      {
        modes: { transaction: true, console: true },
        workflows: { transaction: 't.js' },
      },
      { 't.js': 'export function main() {}' },
    );
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      {
        key: 'workflows.transaction',
        message:
          "exports none of the functions T6, T9 and the entries of its transactions call (runWorkflow, run, enter): only a token's or a mail's action can run it",
      },
      {
        key: 'modes.console',
        message:
          'the pal has no "console" module: C2, C5, C7 and its console entries (C6) answer NO_WORKFLOW',
      },
    ]);
    // An action of the manifest is a function a page calls.
    const withAction = await problems(
      {
        modes: { transaction: true },
        workflows: { transaction: 't.js' },
        actions: { transaction: [{ name: 'main', label: 'Main' }] },
      },
      { 't.js': 'export function main() {}' },
    );
    expect(withAction).toEqual({ errors: [], warnings: [] });
  });

  it('passes a pal of documents only, the example pals, and names the folder in what it reports', async () => {
    expect(await problems({ modes: { transaction: true } }, {})).toEqual({
      errors: [],
      warnings: [],
    });
    for (const name of readdirSync(examples)) {
      const pkg = await loadPalPackage(join(examples, name));
      expect([name, await checkPalWorkflows(pkg)]).toEqual([name, []]);
    }
    const pkg = await buildPalPackage(
      { id: 'p', workflows: { main: 'main.js' } },
      { 'main.js': 'export function run() {\n  return {;\n}' },
      'my-pal/pal.json',
    );
    const error = await checkPalWorkflows(pkg).catch((e: unknown) => e);
    expect(String((error as Error).message).split('\n')).toEqual([
      expect.stringMatching(/^my-pal\/pal\.json: workflows: no module the service runs \("main"\)/),
      expect.stringMatching(/^my-pal\/main\.js:2: SyntaxError: /),
    ]);
  });

  it("docs/pal-format.md's example pals are the real ones, and deploy", async () => {
    // Before: its tree named workflows/main.js, and its example's modules never ran.
    const doc = readFileSync(join(examples, '../../docs/pal-format.md'), 'utf8');
    const complete = /## A complete example\n[^]*?```json\n([^]*?)```/.exec(doc)![1]!;
    const onboarding = join(examples, 'customer-onboarding');
    expect(JSON.parse(complete)).toEqual(
      JSON.parse(readFileSync(join(onboarding, 'pal.json'), 'utf8')),
    );
    expect(await checkPalWorkflows(await loadPalPackage(onboarding))).toEqual([]);
    const tree = /^examples\/pals\/expense-approval\/\n((?: {2}\S+ .*\n)+)/m.exec(doc)![1]!;
    for (const line of tree.trimEnd().split('\n'))
      expect(existsSync(join(examples, 'expense-approval', line.trim().split(' ')[0]!))).toBe(true);
    const workflows = /### `workflows`\n\n```json\n"workflows": (.*)\n```/.exec(doc)![1]!;
    expect(
      moduleProblems(
        await buildPalPackage(
          { id: 'w', modes: { transaction: true }, workflows: JSON.parse(workflows) as object },
          {
            'workflows/transaction.js': "import './checks.js'; export function runWorkflow() {}",
            'workflows/checks.js': 'export const x = 1;',
          },
        ),
      ),
    ).toEqual({ errors: [], warnings: [] });
  });
});
