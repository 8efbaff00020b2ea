// Runs a pal's workflow (docs/workflows.md): finds the module by the dispatch table, reads what the
// run may see, runs it in the sandbox pool, shapes and checks the return value, and applies the
// run's effects in one database transaction. A failed run keeps nothing but its webServiceStatus
// (transaction runs of T6/T9) and a log line.
import { posix } from 'node:path';
import type { Logger } from 'pino';
import type { WorkflowContext } from './context.js';
import { ConflictError, isDomainError, NotFoundError, TooManyRunsError } from '../domain/errors.js';
import { getPalDetails, getPalVersion } from '../domain/pals.js';
import { assignRole, removeRole } from '../domain/transaction-roles.js';
import {
  requireRunnable,
  isTransactionEvent,
  TRANSACTION_EVENTS,
} from '../domain/transaction-lifecycle.js';
import {
  getTransactionDetails,
  moveWebServiceStatus,
  setTransactionStatus,
  transitionTransaction,
  type TransactionDetails,
} from '../domain/transactions.js';
import { listTransactionRoles } from '../storage/transaction-roles.js';
import { palScope, readVariables, transactionScope, writeVariables } from '../storage/variables.js';
import type { FailureType, RunEffects, SandboxJob, SandboxOutcome, StackFrame } from './job.js';
import { OutputError } from './output.js';
import { queueWorkflowMails, checkMailRecipients, countWorkflowMails } from './mail.js';
import { withTransactionEvents } from '../domain/transaction-events.js';
import { KeyedQueue } from './keyed-queue.js';
import { getPalDocuments, type PalDocument } from '../domain/pal-documents.js';
import {
  base64Contents,
  getCompletedDocuments,
  withCompletedDigests,
} from '../domain/completed-documents.js';
import {
  keepDocumentChanges,
  loadDocumentState,
  toStateDocuments,
  withSubmission,
  type DocumentSubmission,
} from '../domain/transaction-documents.js';

export type RunResult<T> =
  { ok: true; value: T } | { ok: false; type: FailureType; message: string; frames: StackFrame[] };

/** A run's result with the pal it ran (a transaction run learns it from the transaction). */
export type PalRunResult<T> = RunResult<T> & { palId: string };

export interface RunOptions<T> {
  exportName: string;
  /** The export's input, in JSON wire form. */
  input: Record<string, unknown>;
  /** Makes the return value into the response; throws OutputError when it does not fit. */
  shape: (value: unknown, palId: string) => T;
  requestId?: string;
}

/** How often a run is repeated when another run wrote the same variables first. */
const MAX_ATTEMPTS = 5;
const transactionQueue = new KeyedQueue();

/** C2, C5, C7 (and C6 entries): the `console` module of a console-mode pal of the enterprise. */
export function runConsoleModule<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  options: RunOptions<T>,
): Promise<RunResult<T>> {
  return admitted(ctx, enterpriseId, () =>
    runPalModule(ctx, enterpriseId, palId, 'console', options),
  );
}

/** U1: the `user` module of a pal of the enterprise. */
export function runUserModule<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  options: RunOptions<T>,
): Promise<RunResult<T>> {
  return admitted(ctx, enterpriseId, () => runPalModule(ctx, enterpriseId, palId, 'user', options));
}

/**
 * Runs `work` as one of the enterprise's runs in progress on this node, or refuses it with 429
 * when the enterprise already has as many as it may (docs/workflows.md, "One enterprise cannot
 * take every worker"): before anything of the run happens, so a refused run changes nothing.
 */
async function admitted<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  work: () => Promise<T>,
): Promise<T> {
  const release = ctx.workflows.admit(enterpriseId);
  if (!release)
    throw new TooManyRunsError(
      ctx.workflows.runsOf(enterpriseId).admitted,
      // By then every run in progress has reached its time limit at the latest.
      Math.max(1, Math.ceil(ctx.config.workflowTimeoutMs / 1000)),
    );
  try {
    return await work();
  } finally {
    release();
  }
}

/** A console or user run: the current version of a deployed pal (console runs: a console pal). */
async function runPalModule<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  module: 'console' | 'user',
  options: RunOptions<T>,
): Promise<RunResult<T>> {
  const pal = await getPalDetails(ctx, enterpriseId, palId);
  if (module === 'console' && !pal.modeConsole) throw NotFoundError.of('console pal', palId);
  if (!pal.deployed) throw new ConflictError(`pal "${palId}" is not deployed`);
  const code = await palCode(ctx, enterpriseId, palId, pal.version);
  const scope = palScope(enterpriseId, palId);
  for (let attempt = 1; ; attempt++) {
    const vars = await readVariables(ctx.db, scope);
    const outcome = await execute(
      ctx,
      enterpriseId,
      { ...code, module, vars: vars.values },
      options,
      palId,
    );
    if (!outcome.ok) return outcome;
    const { value, effects } = outcome;
    if (Object.keys(effects.vars).length === 0) return { ok: true, value };
    const written = await ctx.db
      .transaction()
      .execute((trx) => writeVariables(trx, scope, enterpriseId, vars.version, effects.vars));
    if (written) return { ok: true, value };
    if (attempt === MAX_ATTEMPTS) return conflictFailure();
  }
}

export interface TransactionRunOptions<T> extends RunOptions<T> {
  /** T6 and T9 move webServiceStatus RUNNING → SUCCEEDED or FAILED; entries will not. */
  webService: boolean;
  /** A session's form: its values and signatures are kept with the run's effects if it succeeds. */
  submission?: DocumentSubmission;
  /**
   * Whether the run's answer lets the submission be kept (a form's run that returns
   * `success: false` keeps the person's draft, not their values); default: yes.
   */
  keepsSubmission?: (value: T) => boolean;
}

/**
 * T6, T9 (and transaction entries): the `transaction` module of the pal version the transaction
 * was created from; ConflictError (409) when its systemStatus forbids runs. Runs on one transaction are serialized in this process; across processes the
 * variables' version check makes a second writer repeat its run.
 */
export function runTransactionModule<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  transactionId: string,
  options: TransactionRunOptions<T>,
): Promise<PalRunResult<T>> {
  return admitted(ctx, enterpriseId, () =>
    transactionQueue.run(transactionId, async (): Promise<PalRunResult<T>> => {
      let transaction = options.webService
        ? await withTransactionEvents(ctx, enterpriseId, transactionId, (tx) =>
            moveWebServiceStatus(tx, enterpriseId, transactionId, 'start'),
          )
        : await getTransactionDetails(ctx, enterpriseId, transactionId);
      // Pages obey the rule of T6 and T9 (which moveWebServiceStatus checks): 409 when the
      // transaction's systemStatus forbids runs.
      if (!options.webService) requireRunnable(transaction.systemStatus);
      const { palId } = transaction;
      const code = await palCode(ctx, enterpriseId, transaction.palId, transaction.palVersion);
      const documents = await palDocuments(ctx, enterpriseId, palId, transaction.palVersion);
      const scope = transactionScope(transactionId);
      let result: Failure | undefined;
      for (let attempt = 1; !result; attempt++) {
        const [vars, roles, states, completed] = await Promise.all([
          readVariables(ctx.db, scope),
          transactionRoles(ctx, transactionId),
          documents.length > 0 ? loadDocumentState(ctx.db, transactionId, documents) : [],
          transaction.systemStatus === 'COMPLETED' && documents.length > 0
            ? getCompletedDocuments(ctx, enterpriseId, transactionId)
            : undefined,
        ]);
        const outcome = await execute(
          ctx,
          enterpriseId,
          {
            ...code,
            module: 'transaction',
            vars: vars.values,
            transaction: view(transaction),
            roles,
            documents: withCompletedDigests(
              toStateDocuments(documents, withSubmission(states, options.submission)),
              completed,
            ),
            ...(completed ? { completedDocuments: base64Contents(completed) } : {}),
          },
          // Every run gets the pal's id (docs/workflows.md, "Input"); only the engine knows it here.
          { ...options, input: { ...options.input, palId } },
          palId,
        );
        if (!outcome.ok) {
          result = outcome;
          break;
        }
        try {
          const applied = await applyTransactionEffects(
            ctx,
            transaction,
            scope,
            vars.version,
            outcome.effects,
            {
              webService: options.webService,
              submission:
                options.submission && (options.keepsSubmission?.(outcome.value) ?? true)
                  ? options.submission
                  : undefined,
            },
          );
          if (applied) return { ok: true, value: outcome.value, palId };
          if (attempt === MAX_ATTEMPTS) result = conflictFailure();
          else transaction = await getTransactionDetails(ctx, enterpriseId, transactionId);
        } catch (error) {
          // An effect the state no longer allows (an illegal move, an unknown SSO): the run fails.
          if (!isDomainError(error)) throw error;
          result = { ok: false, type: 'WORKFLOW_ERROR', message: error.message, frames: [] };
        }
      }
      if (options.webService)
        await withTransactionEvents(ctx, enterpriseId, transactionId, (tx) =>
          moveWebServiceStatus(tx, enterpriseId, transactionId, 'fail'),
        ).catch((error) =>
          ctx.log.warn({ err: error, transactionId }, 'could not mark a failed run FAILED'),
        );
      logFailure(ctx.log, result, palId, options, transactionId);
      return { ...result, palId };
    }),
  );
}

/** The roles held on the transaction, as the sandbox shows them (pal.roles.list). */
async function transactionRoles(ctx: WorkflowContext, transactionId: string) {
  const rows = await listTransactionRoles(ctx.db, transactionId);
  return rows.map((r) => ({ sso: r.ssoId, role: r.role }));
}

/**
 * All of a successful transaction run's effects, in one database transaction with their events
 * and mails (docs/events.md); false on a conflict.
 */
async function applyTransactionEffects(
  ctx: WorkflowContext,
  transaction: TransactionDetails,
  scope: string,
  readVersion: number,
  effects: RunEffects,
  options: Pick<TransactionRunOptions<unknown>, 'webService' | 'submission'>,
) {
  const { enterpriseId, id } = transaction;
  return withTransactionEvents(ctx, enterpriseId, id, async (tx) => {
    const trx = tx.db;
    if (Object.keys(effects.vars).length > 0) {
      const written = await writeVariables(trx, scope, enterpriseId, readVersion, effects.vars);
      if (!written) return false;
    }
    if (effects.status !== undefined)
      await setTransactionStatus(tx, enterpriseId, id, effects.status);
    for (const event of effects.moves) {
      // The moves come back from the worker thread as strings; host-api.ts records only events of
      // WORKFLOW_MOVES, so another one is a defect of the engine, not of the pal.
      if (!isTransactionEvent(event))
        throw new Error(`the worker reported an unknown move "${event}"`);
      await transitionTransaction(tx, enterpriseId, id, event);
    }
    for (const change of effects.roles) {
      if (change.op === 'assign') await assignRole(tx, enterpriseId, id, change.sso, change.role);
      else await removeRole(tx, enterpriseId, id, change.sso);
    }
    const mails = await checkMailRecipients(tx, enterpriseId, effects.mails);
    await countWorkflowMails(tx, enterpriseId, mails.length);
    await queueWorkflowMails(tx, transaction, mails);
    await keepDocumentChanges(tx, transaction, options.submission, effects.fields);
    if (options.webService) await moveWebServiceStatus(tx, enterpriseId, id, 'succeed');
    return true;
  });
}

type Failure = Extract<RunResult<never>, { ok: false }>;
export type Execution<T> = { ok: true; value: T; effects: RunEffects } | Failure;

/** The systemStatus moves a workflow may make (pal.transaction.complete and cancel). */
export const WORKFLOW_MOVES = {
  complete: TRANSACTION_EVENTS.complete,
  cancel: TRANSACTION_EVENTS.cancel,
};

async function execute<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  job: Omit<
    SandboxJob,
    'exportName' | 'inputJson' | 'moves' | 'timeoutMs' | 'memoryBytes' | 'maxResultLength'
  >,
  options: RunOptions<T>,
  palId: string,
): Promise<Execution<T>> {
  const outcome = await ctx.workflows.run(
    {
      ...job,
      exportName: options.exportName,
      inputJson: JSON.stringify(options.input),
      moves: WORKFLOW_MOVES,
      timeoutMs: ctx.config.workflowTimeoutMs,
      memoryBytes: ctx.config.workflowMemoryMb * 1024 * 1024,
      maxResultLength: ctx.config.workflowResultMaxChars,
    },
    enterpriseId,
  );
  if (outcome.logs.length > 0)
    ctx.log.info(
      { reqId: options.requestId, palId, module: job.module, logs: outcome.logs },
      'workflow log',
    );
  const settled = settle(outcome, options.shape, palId);
  if (!settled.ok && job.transaction === undefined) logFailure(ctx.log, settled, palId, options);
  return settled;
}

/** A sandbox outcome made into the operation's answer, or the failure it is. */
export function settle<T>(
  outcome: SandboxOutcome,
  shape: (value: unknown, palId: string) => T,
  palId: string,
): Execution<T> {
  if (!outcome.ok)
    return { ok: false, type: outcome.type, message: outcome.message, frames: outcome.frames };
  try {
    const value =
      outcome.valueJson === undefined ? undefined : (JSON.parse(outcome.valueJson) as unknown);
    return { ok: true, value: shape(value, palId), effects: outcome.effects };
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    return { ok: false, type: 'WORKFLOW_ERROR', message: error.message, frames: [] };
  }
}

/** The documents of a pal version (never changing once deployed), kept like its code. */
const palDocumentsCache = new Map<string, Promise<PalDocument[]>>();

function palDocuments(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<PalDocument[]> {
  const key = `${enterpriseId}\u0000${palId}\u0000${version}`;
  let documents = palDocumentsCache.get(key);
  if (documents) {
    palDocumentsCache.delete(key);
  } else {
    documents = getPalDocuments(ctx, enterpriseId, palId, version);
    documents.catch(() => palDocumentsCache.delete(key));
    if (palDocumentsCache.size >= PAL_CODE_CACHE_SIZE)
      palDocumentsCache.delete(palDocumentsCache.keys().next().value!);
  }
  palDocumentsCache.set(key, documents);
  return documents;
}

/** A deployed pal version never changes: its code is kept, the least recently used dropped first. */
const PAL_CODE_CACHE_SIZE = 256;
const palCodeCache = new Map<string, Promise<PalCode>>();

interface PalCode {
  modules: Record<string, string>;
  files: Record<string, string>;
}

async function palCode(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<PalCode> {
  const key = `${enterpriseId}\u0000${palId}\u0000${version}`;
  let code = palCodeCache.get(key);
  if (code) {
    palCodeCache.delete(key);
  } else {
    code = readPalCode(ctx, enterpriseId, palId, version);
    code.catch(() => palCodeCache.delete(key));
    if (palCodeCache.size >= PAL_CODE_CACHE_SIZE)
      palCodeCache.delete(palCodeCache.keys().next().value!);
  }
  palCodeCache.set(key, code);
  return code;
}

async function readPalCode(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<PalCode> {
  const { manifest, files } = await getPalVersion(ctx, enterpriseId, palId, version);
  // Module names resolve to normalized paths (`./a/../b.js` is `b.js`): key the files alike.
  return {
    modules: Object.fromEntries(
      Object.entries(manifest.workflows ?? {}).map(([name, path]) => [name, posix.normalize(path)]),
    ),
    files: Object.fromEntries(
      Object.entries(files).map(([path, source]) => [posix.normalize(path), source]),
    ),
  };
}

function view(transaction: TransactionDetails) {
  return {
    id: transaction.id,
    palId: transaction.palId,
    status: transaction.status,
    systemStatus: transaction.systemStatus,
    webServiceStatus: transaction.webServiceStatus,
  };
}

function conflictFailure(): Failure {
  return {
    ok: false,
    type: 'WORKFLOW_ERROR',
    message: 'other runs kept changing the same variables; the run was repeated and gave up',
    frames: [],
  };
}

function logFailure(
  log: Logger,
  failure: { type: FailureType; message: string },
  palId: string,
  options: { exportName: string; requestId?: string },
  transactionId?: string,
): void {
  log.warn(
    {
      reqId: options.requestId,
      palId,
      transactionId,
      export: options.exportName,
      type: failure.type,
    },
    `workflow run failed: ${failure.message}`,
  );
}
