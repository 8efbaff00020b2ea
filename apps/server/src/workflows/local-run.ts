// `pal run`: one export of a pal folder's module, run in the same sandbox as the server's, with
// an input file, without a server or a database. It answers what the matching operation would
// (C7's ConsoleResult, T9's list, U1's ServiceResponse, …) and what the run would have kept.
import { describeError, errorResult } from '@pal-workflow/server-skeleton';
import { pino } from 'pino';
import { CONFIG_DEFAULTS } from '../config.js';
import { WorkflowFailedError } from '../domain/errors.js';
import { loadPalPackage, palFolder } from '../domain/pal-manifest.js';
import { createWorkerPool } from './context.js';
import { jobBounds, shaped } from './engine.js';
import type { RunEffects, SandboxJob } from './job.js';
import { entryOperation, OPERATIONS, runOptions, type WorkflowOperation } from './operations.js';
import { checkWorkflowSyntax } from './syntax-check.js';

export interface LocalRunOptions {
  module: string;
  exportName: string;
  /**
   * The request body in its JSON wire form (ConsoleContent, TransactionContent, ServiceRequest;
   * C5: {text, contentType}).
   */
  input: unknown;
  vars?: Record<string, string>;
  timeoutMs: number;
  memoryMb: number;
}

export interface LocalRunResult {
  /** The operation whose answer `response` is, e.g. `C7 runConsoleWorkflow`. */
  operation: string;
  /** 200, or 422 for a failed C2/T9 run. */
  status: number;
  response: unknown;
  /** What a successful run would have kept (nothing for a failed one). */
  effects?: RunEffects;
  logs: string[];
}

const LOCAL_TRANSACTION = 'local-transaction';

/** The operation that runs the module's export (the table's), or an entry's action. */
function operationFor(module: string, exportName: string): WorkflowOperation<never, unknown> {
  const known = Object.values(OPERATIONS).find(
    (operation) =>
      operation.module === module &&
      (operation.exportName === exportName || operation.exportName === undefined),
  );
  if (known) return known as WorkflowOperation<never, unknown>;
  const entry = entryOperation(module === 'transaction' ? 'transaction' : 'console');
  return { ...entry, name: `${entry.name} ${exportName}` };
}

export async function runLocally(
  folder: string,
  options: LocalRunOptions,
): Promise<LocalRunResult> {
  const pkg = await loadPalPackage(folder);
  await checkWorkflowSyntax(pkg.files, palFolder(pkg));
  const palId = pkg.manifest.id;
  const operation = operationFor(options.module, options.exportName);
  const target = {
    action: options.exportName,
    ...(operation.module === 'transaction' ? { transactionId: LOCAL_TRANSACTION } : {}),
  };
  const run = runOptions(operation, (options.input ?? {}) as never, target);
  const config = {
    ...CONFIG_DEFAULTS_AS_SETTINGS,
    workflowTimeoutMs: options.timeoutMs,
    workflowMemoryMb: options.memoryMb,
  };
  const job: SandboxJob = {
    files: pkg.files,
    modules: pkg.manifest.workflows ?? {},
    module: options.module,
    ...jobBounds(config),
    exportName: options.exportName,
    inputJson: JSON.stringify(await run.input(palId)),
    vars: options.vars ?? {},
    ...(options.module === 'transaction'
      ? {
          transaction: {
            id: LOCAL_TRANSACTION,
            palId,
            status: 'NEW',
            systemStatus: 'OPEN',
            webServiceStatus: 'RUNNING',
          },
          roles: [],
        }
      : {}),
  };
  const pool = createWorkerPool(config, pino({ level: 'silent' }));
  try {
    const outcome = await pool.run(job);
    const result = shaped(outcome, run.answer.shape, palId);
    const answer = { operation: operation.name, logs: outcome.logs };
    if (result.ok)
      return { ...answer, status: 200, response: result.value, effects: result.effects };
    try {
      return { ...answer, status: 200, response: run.answer.failed(result, palId) };
    } catch (error) {
      // C2 and T9 answer a failed run with 422: the service's errorResult, with the failure's type.
      if (!(error instanceof WorkflowFailedError)) throw error;
      const described = describeError(error);
      return { ...answer, status: described.status, response: errorResult(described) };
    }
  } finally {
    await pool.close();
  }
}

/** `pal run` runs with the service's default settings, on one worker. */
const CONFIG_DEFAULTS_AS_SETTINGS = {
  workflowWorkers: 1,
  workflowWorkerHeapMb: CONFIG_DEFAULTS.WORKFLOW_WORKER_HEAP_MB,
  // One run: no version runs twice, so nothing is worth keeping compiled.
  workflowCodeCacheMb: 0,
  workflowRunsPerEnterprise: 1,
  workflowQueuePerEnterprise: 0,
  workflowResultMaxChars: CONFIG_DEFAULTS.WORKFLOW_RESULT_MAX_CHARS,
};
