// What deploy checks of a pal's workflow modules, beyond the manifest's own keys: that each module
// compiles (syntax-check.ts), and that the modules can run at all. The service runs a module by
// its name only (operations.ts): "transaction" in a transaction-mode pal, "console" in a
// console-mode pal, "user" in any; other modules run only when one of those imports or calls
// them. A pal whose named modules none of these is would deploy without a word, and every run
// answer NO_WORKFLOW (docs/pal-format.md, "workflows").
import { InvalidArgumentError } from '../domain/errors.js';
import type { WorkflowPackage } from '../domain/context.js';
import { palFolder, type PalPackage } from '../domain/pal-manifest.js';
import type { ManifestIssue } from '../domain/manifest-values.js';
import { exportNames } from './module-exports.js';
import { workflowSyntaxProblems } from './syntax-check.js';

/** The modules the service runs by name, the mode each needs, and what runs it. */
const RUN_MODULES = [
  { module: 'transaction', mode: 'transaction', by: 'T6, T9 and the entries of its transactions' },
  { module: 'console', mode: 'console', by: 'C2, C5, C7 and its console entries (C6)' },
  { module: 'user', mode: undefined, by: 'U1, in a pal of any mode' },
] as const;

type RunModule = (typeof RUN_MODULES)[number];

/**
 * The exports the engine calls by name: the operations' (operations.ts, whose table imports the
 * engine, so it is not imported here; deploy-check.test.ts holds the two alike) and an entry's
 * `enter`. U1's request names its export.
 */
export const ENTRY_EXPORTS = {
  transaction: ['runWorkflow', 'run', 'enter'],
  console: ['run', 'executeWorkflow', 'runWorkflow', 'enter'],
} as const;

function entryExports(module: 'transaction' | 'console'): readonly string[] {
  return ENTRY_EXPORTS[module];
}

export class WorkflowCheckError extends InvalidArgumentError {
  override readonly name = 'WorkflowCheckError';
}

/**
 * Checks a package's workflows for deploy: throws a WorkflowCheckError listing every problem (a
 * module that does not compile, `FOLDER/FILE:LINE: …`; a pal none of whose modules can ever run,
 * `FOLDER/pal.json: workflows: …`), else returns the warnings (a module the pal's modes run that
 * exports none of the functions the engine calls, a mode without its module), one a line.
 */
export async function checkPalWorkflows(pkg: WorkflowPackage): Promise<string[]> {
  // Deploy hands its PalPackage (the domain's context names only what this check reads).
  const { errors, warnings } = moduleProblems(pkg as PalPackage);
  const manifestLine = (issue: ManifestIssue) => `${pkg.source}: ${issue.key}: ${issue.message}`;
  const problems = [
    ...errors.map(manifestLine),
    ...(await workflowSyntaxProblems(pkg.files, palFolder(pkg))),
  ];
  if (problems.length > 0) throw new WorkflowCheckError(problems.join('\n'));
  return warnings.map(manifestLine);
}

/** Whether the pal's modes and module names let anything run (see the file's first lines). */
export function moduleProblems(pkg: Pick<PalPackage, 'manifest' | 'files'>): {
  errors: ManifestIssue[];
  warnings: ManifestIssue[];
} {
  const { manifest } = pkg;
  const workflows = manifest.workflows ?? {};
  const names = Object.keys(workflows);
  // A pal of documents only runs no workflow, and means to.
  if (names.length === 0) return { errors: [], warnings: [] };
  const runs = (run: RunModule) => run.mode === undefined || manifest.modes[run.mode];
  const present = RUN_MODULES.filter((run) => runs(run) && Object.hasOwn(workflows, run.module));
  if (present.length === 0) {
    const idle = RUN_MODULES.filter((run) => !runs(run) && Object.hasOwn(workflows, run.module));
    const why = idle.map((run) => `"${run.module}" runs only when modes.${run.mode} is true`);
    return {
      errors: [
        {
          key: 'workflows',
          message:
            `no module the service runs (${names.map((n) => `"${n}"`).join(', ')}): it runs ` +
            `"transaction" in a transaction-mode pal, "console" in a console-mode pal and "user" in any` +
            `${why.length > 0 ? `; ${why.join(', ')}` : ''}; other modules run only when these import or call them ` +
            '(docs/workflows.md, "Which module, which export")',
        },
      ],
      warnings: [],
    };
  }
  const errors: ManifestIssue[] = [];
  const warnings: ManifestIssue[] = [];
  const exportsOf = (module: string) => {
    const source = pkg.files[workflows[module]!];
    return source === undefined ? undefined : exportNames(source);
  };
  const silent = present.filter((run) => exportsOf(run.module)?.size === 0);
  if (silent.length === present.length)
    errors.push({
      key: 'workflows',
      message: `${present.map((run) => `"${run.module}"`).join(' and ')} export${present.length === 1 ? 's' : ''} nothing: no run of this pal can call anything`,
    });
  for (const run of present) {
    const exported = exportsOf(run.module);
    if (exported === undefined || exported.size === 0 || run.module === 'user') continue;
    const actions = (manifest.actions?.[run.module] ?? []).map((action) => action.name);
    const called = [...entryExports(run.module), ...actions];
    if (!called.some((name) => exported.has(name)))
      warnings.push({
        key: `workflows.${run.module}`,
        message: `exports none of the functions ${run.by} call (${entryExports(run.module).join(', ')}${actions.length > 0 ? ", the manifest's actions" : ''}): only a token's or a mail's action can run it`,
      });
  }
  for (const run of RUN_MODULES)
    if (run.mode !== undefined && manifest.modes[run.mode] && !Object.hasOwn(workflows, run.module))
      warnings.push({
        key: `modes.${run.mode}`,
        message: `the pal has no "${run.module}" module: ${run.by} answer NO_WORKFLOW`,
      });
  return { errors, warnings };
}
