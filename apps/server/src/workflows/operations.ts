// The operations that run a workflow (docs/workflows.md), written once: per operation the module
// and export it runs, the input it builds from the request (docs/workflows.md, "Input"), how the
// return value becomes its answer ("Output") and what a failed run answers ("When a run fails":
// a result with success=false, or 422 for the list operations). The HTTP handlers and `pal run`
// (local-run.ts) read this one table.
import type * as Wire from '@pal-workflow/types';
import type { AnyDocument } from '@pal-workflow/server-skeleton';
import { WorkflowFailedError } from '../domain/errors.js';
import type { WorkflowContext } from './context.js';
import {
  runConsoleModule,
  runTransactionModule,
  runUserModule,
  type RunAnswer,
  type RunOptions,
} from './engine.js';
import type { RunFailure } from './job.js';
import { consoleResult, nameValues, transactionResult } from './output.js';
import {
  failedServiceResponse,
  refuseNegativePaging,
  serviceResponse,
  userRunOptions,
} from './user-service.js';

/** What a run is for: the export (U1: the request's action), the pal, the transaction. */
export interface RunTarget {
  action: string;
  palId: string;
  transactionId?: string;
}

export interface WorkflowOperation<Body, Answer> {
  /** `C7 runConsoleWorkflow`: as docs and `pal run` name it. */
  readonly name: string;
  readonly module: 'console' | 'transaction' | 'user';
  /** The export it runs; undefined for U1, whose request names it (`action`). */
  readonly exportName: string | undefined;
  /** T6 and T9 move webServiceStatus RUNNING → SUCCEEDED or FAILED. */
  readonly webService?: boolean;
  /** The export's input, in JSON wire form. */
  input(body: Body, target: RunTarget): object;
  answer(body: Body, target: Omit<RunTarget, 'palId'>): RunAnswer<Answer>;
}

/** A transaction run's input names the pal as well (the engine learns it from the transaction). */
type TransactionRunInput = Wire.TransactionInput & { palId: string };

/** postData as an object of name → value, the last value of a repeated name winning. */
function valuesOf(body: Wire.ConsoleContent | Wire.TransactionContent | undefined) {
  return Object.fromEntries(
    (body?.postData ?? [])
      .filter((pair) => pair.name !== undefined)
      .map((pair) => [pair.name!, pair.value ?? '']),
  );
}

function consoleInput(body: Wire.ConsoleContent | undefined, t: RunTarget): Wire.ConsoleInput {
  return { ...body, values: valuesOf(body), action: t.action, palId: t.palId };
}

function transactionInput(
  body: Wire.TransactionContent | undefined,
  t: RunTarget,
): TransactionRunInput {
  return {
    ...body,
    values: valuesOf(body),
    action: t.action,
    transactionId: t.transactionId!,
    palId: t.palId,
  };
}

function messagesOf(failure: RunFailure): Wire.Message[] {
  return [{ message: failure.message, type: failure.type }];
}

/** C2, T9: a failed run is a 422 with the failure's type. */
function unprocessable(failure: RunFailure): never {
  throw new WorkflowFailedError(failure.type, failure.message);
}

const consoleResultAnswer: RunAnswer<Wire.ConsoleResult> = {
  shape: (value, palId) => consoleResult(value, palId),
  failed: (failure, palId) => ({ success: false, palId, messages: messagesOf(failure) }),
};

function transactionResultAnswer(transactionId: string): RunAnswer<Wire.TransactionResult> {
  return {
    shape: (value, palId) => transactionResult(value, palId, transactionId),
    failed: (failure, palId) => ({
      success: false,
      palId,
      transactionId,
      recordsProcessed: 0,
      messages: messagesOf(failure),
    }),
  };
}

/** C2 and T9, one operation on two modules: export `run`, a list of NameValue, or a 422. */
function listOperation<Body>(
  name: string,
  module: 'console' | 'transaction',
  input: (body: Body, target: RunTarget) => object,
): WorkflowOperation<Body, Wire.NameValue[]> {
  const answer: RunAnswer<Wire.NameValue[]> = { shape: nameValues, failed: unprocessable };
  const webService = module === 'transaction';
  return { name, module, exportName: 'run', webService, input, answer: () => answer };
}

export const OPERATIONS = {
  runConsolePal: listOperation('C2 runConsolePal', 'console', consoleInput),
  executeConsoleWorkflow: {
    name: 'C5 executeConsoleWorkflow',
    module: 'console',
    exportName: 'executeWorkflow',
    input: (body): Wire.ExecuteWorkflowInput => ({
      body: body.text,
      contentType: body.contentType,
    }),
    answer: () => consoleResultAnswer,
  } satisfies WorkflowOperation<AnyDocument, Wire.ConsoleResult>,
  runConsoleWorkflow: {
    name: 'C7 runConsoleWorkflow',
    module: 'console',
    exportName: 'runWorkflow',
    input: consoleInput,
    answer: () => consoleResultAnswer,
  } satisfies WorkflowOperation<Wire.ConsoleContent | undefined, Wire.ConsoleResult>,
  runTransactionWorkflow: {
    name: 'T6 runTransactionWorkflow',
    module: 'transaction',
    exportName: 'runWorkflow',
    webService: true,
    input: transactionInput,
    answer: (_body, t) => transactionResultAnswer(t.transactionId!),
  } satisfies WorkflowOperation<Wire.TransactionContent | undefined, Wire.TransactionResult>,
  runTransaction: listOperation('T9 runTransaction', 'transaction', transactionInput),
  runUserWorkflow: {
    name: 'U1 runUserWorkflow',
    module: 'user',
    exportName: undefined,
    input: (body, t): Wire.UserInput => {
      refuseNegativePaging(body);
      return { ...body, values: body?.payload?.data ?? {}, action: t.action, palId: t.palId };
    },
    answer: (body, t) => ({
      shape: (value, palId) => serviceResponse(value, userRunOptions(palId, t.action, body)),
      failed: (failure, palId) =>
        failedServiceResponse(failure.message, failure.frames, {
          workflow: palId,
          action: t.action,
        }),
    }),
  } satisfies WorkflowOperation<Wire.ServiceRequest | undefined, Wire.ServiceResponse>,
};

/**
 * What `pal run` answers for an export no operation runs (an entry's or a page's action): the
 * answer of the operation that runs the module's `runWorkflow`, under its own name.
 */
export function entryOperation(
  module: 'console' | 'transaction',
): WorkflowOperation<Wire.ConsoleContent | Wire.TransactionContent | undefined, unknown> {
  const like =
    module === 'console' ? OPERATIONS.runConsoleWorkflow : OPERATIONS.runTransactionWorkflow;
  return { ...like, name: 'entry action', exportName: undefined };
}

/** The engine's options for one run of the operation. */
export function runOptions<Body, Answer>(
  operation: WorkflowOperation<Body, Answer>,
  body: Body,
  target: Omit<RunTarget, 'palId'>,
  requestId?: string,
): RunOptions<Answer> {
  return {
    exportName: target.action,
    input: (palId) => operation.input(body, { ...target, palId }),
    answer: operation.answer(body, target),
    requestId,
  };
}

/** Where an operation runs: a pal (console, user) or a transaction, of the caller's enterprise. */
export type RunPlace = { enterpriseId: string; requestId?: string } & (
  { palId: string; transactionId?: undefined } | { transactionId: string; palId?: undefined }
);

/** Runs the operation and answers what it answers (the HTTP handlers' one call). */
export function runOperation<Body, Answer>(
  ctx: WorkflowContext,
  operation: WorkflowOperation<Body, Answer>,
  place: RunPlace,
  body: Body,
  action = operation.exportName!,
): Promise<Answer> {
  const { enterpriseId, requestId } = place;
  if (place.transactionId !== undefined) {
    const { transactionId } = place;
    const options = runOptions(operation, body, { action, transactionId }, requestId);
    return runTransactionModule(ctx, enterpriseId, transactionId, {
      ...options,
      webService: operation.webService ?? false,
    });
  }
  const options = runOptions(operation, body, { action }, requestId);
  return operation.module === 'user'
    ? runUserModule(ctx, enterpriseId, place.palId, options)
    : runConsoleModule(ctx, enterpriseId, place.palId, options);
}
