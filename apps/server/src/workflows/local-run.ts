// `pal run`: one export of a pal folder's module, run in the same sandbox as the server's, with
// an input file, without a server or a database. It answers what the matching operation would
// (C7's ConsoleResult, T9's list, U1's ServiceResponse, …, and the 400 of a request body the
// server refuses) and what the run would have kept.
import {
  checkJsonObject,
  describeError,
  errorResult,
  operations,
  type AnyDocument,
  type OperationId,
  type OperationSpec,
} from '@pal-workflow/server-skeleton';
import {
  checkWellFormedDocument,
  DecodeError,
  decodeJson,
  type RootName,
} from '@pal-workflow/validators';
import { pino } from 'pino';
import { z } from 'zod';
import { CONFIG_DEFAULTS } from '../config.js';
import { InvalidArgumentError, WorkflowFailedError } from '../domain/errors.js';
import { loadPalPackage, palFolder } from '../domain/pal-manifest.js';
import { createWorkerPool } from './context.js';
import { jobBounds, shaped, type RunOptions } from './engine.js';
import type { RunEffects, SandboxJob } from './job.js';
import { entryOperation, OPERATIONS, runOptions, type WorkflowOperation } from './operations.js';
import { checkWorkflowSyntax } from './syntax-check.js';

export interface LocalRunOptions {
  module: string;
  exportName: string;
  /**
   * The input file's text: the request body in its JSON wire form (ConsoleContent,
   * TransactionContent, ServiceRequest; C5: {text, contentType}), checked as the server checks
   * the body. Undefined: `{}`.
   */
  input: string | undefined;
  /** The input file's name, for the messages about it. */
  inputFile?: string;
  vars?: Record<string, string>;
  timeoutMs: number;
  memoryMb: number;
}

export interface LocalRunResult {
  /** The operation whose answer `response` is, e.g. `C7 runConsoleWorkflow`. */
  operation: string;
  /** 200; 422 for a failed C2/T9 run; 400 for an input the server would refuse (nothing ran). */
  status: number;
  response: unknown;
  /**
   * `succeeded`: the run succeeded and its answer does not say `success: false`; `refused`: the
   * answer is `success: false` of the workflow's own (what the run did is kept); `failed`: the
   * input was refused or the run failed (NO_WORKFLOW, WORKFLOW_ERROR, …): nothing is kept.
   */
  outcome: 'succeeded' | 'refused' | 'failed';
  /** What a successful run would have kept (nothing for a failed one). */
  effects?: RunEffects;
  logs: string[];
}

const LOCAL_TRANSACTION = 'local-transaction';

/** The operation that runs the module's export (the table's), or an entry's action. */
function operationFor(
  module: string,
  exportName: string,
): { operation: WorkflowOperation<never, unknown>; body: BodySpec } {
  const known = Object.entries(OPERATIONS).find(
    ([, operation]) =>
      operation.module === module &&
      (operation.exportName === exportName || operation.exportName === undefined),
  );
  if (known)
    return {
      operation: known[1] as WorkflowOperation<never, unknown>,
      body: (operations[known[0] as OperationId] as OperationSpec).body!,
    };
  const entry = entryOperation(module === 'transaction' ? 'transaction' : 'console');
  const root = module === 'transaction' ? 'transactionContent' : 'consoleContent';
  return {
    operation: { ...entry, name: `${entry.name} ${exportName}` },
    body: { kind: 'typed', root },
  };
}

type BodySpec = { kind: 'typed'; root: RootName } | { kind: 'any' };

/** C5's input file: the document a client posts, and the Content-Type it posts it with. */
const zDocumentFile = z.strictObject({
  text: z.string(),
  contentType: z.enum(['application/json', 'application/xml']),
});

/**
 * The request body the input file stands for, checked as the server checks a JSON body (or, for
 * C5, the document of its type): a DecodeError is the server's 400. A C5 file that is not
 * `{text, contentType}` stands for no request at all: an Error naming the file.
 */
function requestBody(spec: BodySpec, text: string, file: string): unknown {
  if (spec.kind === 'typed') return decodeJson(spec.root, text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  const document = zDocumentFile.safeParse(parsed);
  if (!document.success)
    throw new Error(
      `${file}: C5's input is {"text": the document, "contentType": "application/json" or "application/xml"}: ` +
        document.error.issues
          .map((i) => `${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message}`)
          .join('; '),
    );
  const body: AnyDocument = document.data;
  if (body.contentType === 'application/xml') checkWellFormedDocument(body.text);
  else checkJsonObject(body.text);
  return body;
}

/** What the server answers an error of the request: its status and errorResult. */
function refusal(error: unknown): { status: number; response: unknown } | undefined {
  if (!(error instanceof DecodeError || error instanceof InvalidArgumentError)) return undefined;
  const described = describeError(error);
  return { status: described.status, response: errorResult(described) };
}

export async function runLocally(
  folder: string,
  options: LocalRunOptions,
): Promise<LocalRunResult> {
  const pkg = await loadPalPackage(folder);
  await checkWorkflowSyntax(pkg.files, palFolder(pkg));
  const palId = pkg.manifest.id;
  const { operation, body: bodySpec } = operationFor(options.module, options.exportName);
  const target = {
    action: options.exportName,
    ...(operation.module === 'transaction' ? { transactionId: LOCAL_TRANSACTION } : {}),
  };
  let run: RunOptions<unknown>;
  let inputJson: string;
  try {
    const body = requestBody(bodySpec, options.input ?? '{}', options.inputFile ?? 'the input');
    run = runOptions(operation, body as never, target);
    inputJson = JSON.stringify(await run.input(palId));
  } catch (error) {
    // What the server answers 400 (a body its validators refuse, U1's negative paging), and
    // nothing runs.
    const refused = refusal(error);
    if (!refused) throw error;
    return { operation: operation.name, ...refused, outcome: 'failed', logs: [] };
  }
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
    inputJson,
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
    if (result.ok) {
      const said = result.value as { success?: unknown } | undefined;
      const outcome = said?.success === false ? 'refused' : 'succeeded';
      return { ...answer, status: 200, response: result.value, effects: result.effects, outcome };
    }
    try {
      return {
        ...answer,
        status: 200,
        response: run.answer.failed(result, palId),
        outcome: 'failed',
      };
    } catch (error) {
      // C2 and T9 answer a failed run with 422: the service's errorResult, with the failure's type.
      if (!(error instanceof WorkflowFailedError)) throw error;
      const described = describeError(error);
      return {
        ...answer,
        status: described.status,
        response: errorResult(described),
        outcome: 'failed',
      };
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
