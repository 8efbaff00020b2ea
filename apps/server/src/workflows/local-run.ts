// `pal run`: one export of a pal folder's module, run in the same sandbox as the server's, with
// an input file, without a server or a database. It answers what the matching operation would
// (C7's ConsoleResult, T9's list, U1's ServiceResponse, …) and what the run would have kept.
import { pino } from 'pino';
import type * as Wire from '@pal-workflow/types';
import { CONFIG_DEFAULTS } from '../config.js';
import { loadPalPackage } from '../domain/pal-manifest.js';
import type { RunEffects, SandboxJob, StackFrame } from './job.js';
import { WORKFLOW_BACKSTOP_GRACE_MS } from './context.js';
import { settle, WORKFLOW_MOVES } from './engine.js';
import { contentInput } from './input.js';
import { consoleResult, nameValues, transactionResult } from './output.js';
import { WorkerPool } from './pool.js';
import { checkWorkflowSyntax } from './syntax-check.js';
import { failedServiceResponse, serviceResponse, userRunOptions } from './user-service.js';

export interface LocalRunOptions {
  module: string;
  exportName: string;
  /** The request body in its JSON wire form (ConsoleContent, TransactionContent, ServiceRequest). */
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

interface Operation {
  name: string;
  shape: (value: unknown, palId: string) => unknown;
  failed: (palId: string, failure: Failure) => { status: number; response: unknown };
}
type Failure = { type: string; message: string; frames: StackFrame[] };

const messagesOf = (f: Failure): Wire.Message[] => [{ message: f.message, type: f.type }];
const LOCAL_TRANSACTION = 'local-transaction';

function operationFor(module: string, exportName: string, input: unknown): Operation {
  const unprocessable = (_palId: string, f: Failure) => ({
    status: 422,
    response: { success: false, messages: messagesOf(f) },
  });
  if (module === 'user') {
    const options = userRunOptions('', exportName, input as Wire.ServiceRequest);
    return {
      name: 'U1 runUserWorkflow',
      shape: (value, palId) => serviceResponse(value, { ...options, workflow: palId }),
      failed: (palId, f) => ({
        status: 200,
        response: failedServiceResponse(f.message, f.frames, {
          workflow: palId,
          action: exportName,
        }),
      }),
    };
  }
  if (exportName === 'run')
    return {
      name: module === 'console' ? 'C2 runConsolePal' : 'T9 runTransaction',
      shape: nameValues,
      failed: unprocessable,
    };
  if (module === 'transaction')
    return {
      name:
        exportName === 'runWorkflow' ? 'T6 runTransactionWorkflow' : `entry action ${exportName}`,
      shape: (value, palId) => transactionResult(value, palId, LOCAL_TRANSACTION),
      failed: (palId, f) => ({
        status: 200,
        response: {
          success: false,
          palId,
          transactionId: LOCAL_TRANSACTION,
          recordsProcessed: 0,
          messages: messagesOf(f),
        },
      }),
    };
  return {
    name:
      exportName === 'executeWorkflow'
        ? 'C5 executeConsoleWorkflow'
        : exportName === 'runWorkflow'
          ? 'C7 runConsoleWorkflow'
          : `entry action ${exportName}`,
    shape: (value, palId) => consoleResult(value, palId),
    failed: (palId, f) => ({
      status: 200,
      response: { success: false, palId, messages: messagesOf(f) },
    }),
  };
}

export async function runLocally(
  folder: string,
  options: LocalRunOptions,
): Promise<LocalRunResult> {
  const pkg = await loadPalPackage(folder);
  await checkWorkflowSyntax(pkg.files);
  const palId = pkg.manifest.id;
  const operation = operationFor(options.module, options.exportName, options.input);
  const body = (options.input ?? {}) as Record<string, unknown>;
  const input =
    options.module === 'user'
      ? {
          ...body,
          values: (body as Partial<Wire.ServiceRequest>).payload?.data ?? {},
          action: options.exportName,
          palId,
        }
      : options.module === 'transaction'
        ? contentInput(body, {
            action: options.exportName,
            transactionId: LOCAL_TRANSACTION,
            palId,
          })
        : contentInput(body, { action: options.exportName, palId });
  const job: SandboxJob = {
    files: pkg.files,
    modules: pkg.manifest.workflows ?? {},
    module: options.module,
    exportName: options.exportName,
    inputJson: JSON.stringify(input),
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
    moves: WORKFLOW_MOVES,
    timeoutMs: options.timeoutMs,
    memoryBytes: options.memoryMb * 1024 * 1024,
    maxResultLength: CONFIG_DEFAULTS.WORKFLOW_RESULT_MAX_CHARS,
  };
  const pool = new WorkerPool({
    size: 1,
    memoryLimitBytes: job.memoryBytes,
    backstopGraceMs: WORKFLOW_BACKSTOP_GRACE_MS,
    workerHeapMb: CONFIG_DEFAULTS.WORKFLOW_WORKER_HEAP_MB,
    log: pino({ level: 'silent' }),
  });
  try {
    const outcome = await pool.run(job);
    const settled = settle(outcome, operation.shape, palId);
    return settled.ok
      ? {
          operation: operation.name,
          status: 200,
          response: settled.value,
          effects: settled.effects,
          logs: outcome.logs,
        }
      : { operation: operation.name, ...operation.failed(palId, settled), logs: outcome.logs };
  } finally {
    await pool.close();
  }
}
