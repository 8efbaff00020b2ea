// Runs a pal's workflow (docs/workflows.md): finds the module by the dispatch table, reads what the
// run may see, runs it in the sandbox pool, shapes and checks the return value, and applies the
// run's effects in one database transaction. A failed run keeps nothing but its webServiceStatus
// (transaction runs of T6/T9) and a log line.
import { bodyItemsOver, DEFAULT_BODY_ITEM_LIMIT } from '@pal-workflow/server-skeleton';
import { posix } from 'node:path';
import type { Config } from '../config.js';
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
import type { PalCode } from './engine-state.js';
import { exportNames } from './module-exports.js';
import {
  codeKeyOf,
  type RunEffects,
  type RunFailure,
  type RunOutcome,
  type SandboxJob,
  type SandboxOutcome,
} from './job.js';
import { OutputError } from './output.js';
import { queueWorkflowMails, checkMailRecipients, countWorkflowMails } from './mail.js';
import { withTransactionEvents } from '../domain/transaction-events.js';
import { getPalDocuments } from '../domain/pal-documents.js';
import {
  base64Contents,
  getCompletedDocuments,
  withCompletedDigests,
} from '../domain/completed-documents.js';
import {
  keepDocumentChanges,
  loadDocumentState,
  loadUploads,
  toStateDocuments,
  uploadsWithSubmission,
  withSubmission,
  type DocumentSubmission,
} from '../domain/transaction-documents.js';

/**
 * How a run becomes the operation's answer (operations.ts holds one per operation): its value
 * shaped (throwing OutputError when it does not fit, which fails the run), or its failure's
 * answer (which may throw, e.g. WorkflowFailedError for a 422). Both learn the pal that ran.
 */
export interface RunAnswer<T> {
  shape(value: unknown, palId: string): T;
  failed(failure: RunFailure, palId: string): T;
}

export interface RunOptions<T> {
  exportName: string;
  /** The export's input, in JSON wire form, for the pal that runs (a transaction names it). */
  /** Asked only when the run is about to start (an export the module lacks asks nothing). */
  input: (palId: string) => object | Promise<object>;
  answer: RunAnswer<T>;
  requestId?: string;
}

/** How often a run is repeated when another run wrote the same variables first. */
const MAX_ATTEMPTS = 5;

/** C2, C5, C7 (and C6 entries): the `console` module of a console-mode pal of the enterprise. */
export function runConsoleModule<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  options: RunOptions<T>,
): Promise<T> {
  return admitted(ctx, enterpriseId, async () =>
    answer(ctx, options, palId, await runPalModule(ctx, enterpriseId, palId, 'console', options)),
  );
}

/** U1: the `user` module of a pal of the enterprise. */
export function runUserModule<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  options: RunOptions<T>,
): Promise<T> {
  return admitted(ctx, enterpriseId, async () =>
    answer(ctx, options, palId, await runPalModule(ctx, enterpriseId, palId, 'user', options)),
  );
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
  const { pool } = ctx.engine;
  const release = pool.admit(enterpriseId);
  if (!release)
    throw new TooManyRunsError(
      pool.runsOf(enterpriseId).admitted,
      // By then every run in progress has reached its time limit at the latest.
      Math.max(1, Math.ceil(ctx.config.workflowTimeoutMs / 1000)),
    );
  try {
    return await work();
  } finally {
    release();
  }
}

/**
 * The one place a run ends: a failure is logged (once, whatever kind of run it was), then the
 * outcome becomes the operation's answer.
 */
function answer<T>(
  ctx: WorkflowContext,
  options: RunOptions<T>,
  palId: string,
  outcome: RunOutcome<T>,
  transactionId?: string,
): T {
  if (outcome.ok) return outcome.value;
  ctx.log.warn(
    {
      reqId: options.requestId,
      palId,
      transactionId,
      export: options.exportName,
      type: outcome.type,
    },
    `workflow run failed: ${outcome.message}`,
  );
  return options.answer.failed(outcome, palId);
}

/**
 * Runs `attempt` until its effects are kept: an attempt answers 'conflict' when another run wrote
 * the same variables first (the variables' version check), and is repeated, at most MAX_ATTEMPTS
 * times in all.
 */
async function repeatOnConflict<T>(
  attempt: () => Promise<RunOutcome<T> | 'conflict'>,
): Promise<RunOutcome<T>> {
  for (let attempts = 0; attempts < MAX_ATTEMPTS; attempts++) {
    const outcome = await attempt();
    if (outcome !== 'conflict') return outcome;
  }
  return {
    ok: false,
    type: 'WORKFLOW_ERROR',
    message: 'other runs kept changing the same variables; the run was repeated and gave up',
    frames: [],
  };
}

/** A console or user run: the current version of a deployed pal (console runs: a console pal). */
async function runPalModule<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  module: 'console' | 'user',
  options: RunOptions<T>,
): Promise<RunOutcome<T>> {
  const pal = await getPalDetails(ctx, enterpriseId, palId);
  if (module === 'console' && !pal.modeConsole) throw NotFoundError.of('console pal', palId);
  if (!pal.deployed) throw new ConflictError(`pal "${palId}" is not deployed`);
  const {
    documents: _documents,
    uploads: _uploads,
    exports: _exports,
    ...code
  } = await palCode(ctx, enterpriseId, palId, pal.version);
  const scope = palScope(enterpriseId, palId);
  return repeatOnConflict(async () => {
    const vars = await readVariables(ctx.db, scope);
    const outcome = await execute(
      ctx,
      enterpriseId,
      { ...code, module, vars: vars.values },
      options,
      palId,
    );
    if (!outcome.ok || Object.keys(outcome.effects.vars).length === 0) return outcome;
    const written = await ctx.db
      .transaction()
      .execute((trx) =>
        writeVariables(trx, scope, enterpriseId, vars.version, outcome.effects.vars),
      );
    return written ? outcome : 'conflict';
  });
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
  /**
   * The transaction as the caller read it in the commit it just made (an entry's): what the
   * check of a page's or an entry's export needs, without reading the transaction again.
   */
  known?: KnownTransaction;
}

/** What the check of an export needs of the transaction (palId and palVersion never change). */
export type KnownTransaction = Pick<TransactionDetails, 'palId' | 'palVersion' | 'systemStatus'>;

/**
 * T6, T9 (and transaction entries): the `transaction` module of the pal version the transaction
 * was created from; ConflictError (409) when its systemStatus forbids runs. Runs on one
 * transaction are serialized in this process; across processes the variables' version check
 * makes a second writer repeat its run.
 */
export async function runTransactionModule<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  transactionId: string,
  options: TransactionRunOptions<T>,
): Promise<T> {
  // A page's action or an entry's `enter` that the module does not have is answered at once, as
  // the sandbox would answer it, without taking a run of the enterprise's cap or the
  // transaction's line. (T6 and T9 go the whole way: they move webServiceStatus either way.)
  if (!options.webService) {
    const transaction =
      options.known ?? (await getTransactionDetails(ctx, enterpriseId, transactionId));
    requireRunnable(transaction.systemStatus);
    const code = await palCode(ctx, enterpriseId, transaction.palId, transaction.palVersion);
    const missing = missingExport(code, 'transaction', options.exportName);
    if (missing)
      return options.answer.failed(
        { ok: false, type: 'NO_WORKFLOW', message: missing, frames: [] },
        transaction.palId,
      );
  }
  return admitted(ctx, enterpriseId, () =>
    ctx.engine.transactionRuns.run(transactionId, async () => {
      let transaction = options.webService
        ? await moveWithEvents(ctx, enterpriseId, transactionId, 'start')
        : await getTransactionDetails(ctx, enterpriseId, transactionId);
      // Pages obey the rule of T6 and T9 (which moveWebServiceStatus checks): 409 when the
      // transaction's systemStatus forbids runs.
      if (!options.webService) requireRunnable(transaction.systemStatus);
      const { palId } = transaction;
      // A form judged while the documents were open, whose turn came after a run before it closed
      // them (completed the transaction, or took the signer's role): nothing of it is kept.
      const closed = await submissionClosed(ctx, transaction, options.submission);
      if (closed)
        return answer(
          ctx,
          options,
          palId,
          { ok: false, type: 'WORKFLOW_ERROR', message: closed, frames: [] },
          transactionId,
        );
      const {
        documents,
        uploads: asksUploads,
        exports: _exports,
        ...code
      } = await palCode(ctx, enterpriseId, palId, transaction.palVersion);
      const scope = transactionScope(transactionId);
      const markFailed = () =>
        moveWithEvents(ctx, enterpriseId, transactionId, 'fail').catch((error) =>
          ctx.log.warn({ err: error, transactionId }, 'could not mark a failed run FAILED'),
        );
      const outcome = await repeatOnConflict(async () => {
        const [vars, roles, states, uploads, completed] = await Promise.all([
          readVariables(ctx.db, scope),
          transactionRoles(ctx, transactionId),
          documents.length > 0 ? loadDocumentState(ctx.db, transactionId, documents) : [],
          asksUploads ? loadUploads(ctx.db, transactionId) : [],
          transaction.systemStatus === 'COMPLETED' && documents.length > 0
            ? getCompletedDocuments(ctx, enterpriseId, transactionId)
            : undefined,
        ]);
        const ran = await execute(
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
            uploads: uploadsWithSubmission(uploads, options.submission),
          },
          options,
          palId,
        );
        if (!ran.ok) return ran;
        try {
          const applied = await applyTransactionEffects(
            ctx,
            transaction,
            scope,
            vars.version,
            ran.effects,
            {
              webService: options.webService,
              submission:
                options.submission && (options.keepsSubmission?.(ran.value) ?? true)
                  ? options.submission
                  : undefined,
            },
          );
          if (applied) return ran;
        } catch (error) {
          // An effect the state no longer allows (an illegal move, an unknown SSO): the run fails.
          // The database away (503) is no fault of the run's: the request gets its 503.
          if (isDomainError(error) && error.statusCode < 500)
            return { ok: false, type: 'WORKFLOW_ERROR', message: error.message, frames: [] };
          // A fault of the service's own (the database refused the commit): the request gets its
          // 500, and the transaction is not left RUNNING, which would hold every next run back.
          if (options.webService) await markFailed();
          throw error;
        }
        // The next attempt sees what the other run made of the transaction.
        transaction = await getTransactionDetails(ctx, enterpriseId, transactionId);
        return 'conflict';
      });
      if (!outcome.ok && options.webService) await markFailed();
      return answer(ctx, options, palId, outcome, transactionId);
    }),
  );
}

/**
 * Why a form's values and signatures may no longer be kept, as things stand now: the documents
 * are closed (the transaction is no longer OPEN), or a signer no longer holds the role they sign
 * for; undefined when they may.
 */
async function submissionClosed(
  ctx: WorkflowContext,
  transaction: TransactionDetails,
  submission: DocumentSubmission | undefined,
): Promise<string | undefined> {
  if (!submission) return undefined;
  const { values, signatures, uploads } = submission;
  if (values.length + signatures.length + uploads.length === 0) return undefined;
  if (transaction.systemStatus !== 'OPEN')
    return `the documents closed before this form's turn (the transaction is ${transaction.systemStatus}): nothing of it was kept`;
  const signers = signatures.filter((s) => s.sso !== null);
  if (signers.length === 0) return undefined;
  const held = new Set(
    (await transactionRoles(ctx, transaction.id)).map((r) => `${r.sso}\u0000${r.role}`),
  );
  const lost = signers.find((s) => !held.has(`${s.sso}\u0000${s.role}`));
  return lost
    ? `the role "${lost.role}" was taken from the signer before this form's turn: nothing of it was kept`
    : undefined;
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
  return withTransactionEvents(ctx, enterpriseId, id, async (dbTx) => {
    const trx = dbTx.db;
    if (Object.keys(effects.vars).length > 0) {
      const written = await writeVariables(trx, scope, enterpriseId, readVersion, effects.vars);
      if (!written) return { result: false, after: 'unchanged' };
    }
    // The transaction as the last of these changes left it (withTransactionEvents).
    let after: TransactionDetails | 'unchanged' = 'unchanged';
    if (effects.status !== undefined)
      after = await setTransactionStatus(dbTx, enterpriseId, id, effects.status);
    for (const event of effects.moves) {
      // The moves come back from the worker thread as strings; host-api.ts records only events of
      // WORKFLOW_MOVES, so another one is a defect of the engine, not of the pal.
      if (!isTransactionEvent(event))
        throw new Error(`the worker reported an unknown move "${event}"`);
      after = await transitionTransaction(dbTx, enterpriseId, id, event);
    }
    for (const change of effects.roles) {
      if (change.op === 'assign') await assignRole(dbTx, enterpriseId, id, change.sso, change.role);
      // Roles alone: the run holds the transaction's row (withTransactionEvents), which an entry
      // redeeming one of the SSO's tokens waits for; waiting here for that token would deadlock.
      else await removeRole(dbTx, enterpriseId, id, change.sso, { withdrawTokens: false });
    }
    const mails = await checkMailRecipients(dbTx, enterpriseId, effects.mails);
    await countWorkflowMails(dbTx, enterpriseId, mails.length);
    await queueWorkflowMails(dbTx, transaction, mails);
    await keepDocumentChanges(dbTx, transaction, options.submission, effects);
    if (options.webService) after = await moveWebServiceStatus(dbTx, enterpriseId, id, 'succeed');
    return { result: true, after };
  });
}

/** Moves webServiceStatus by `event` in a database transaction of its own, with its events. */
async function moveWithEvents(
  ctx: WorkflowContext,
  enterpriseId: string,
  transactionId: string,
  event: 'start' | 'fail',
): Promise<TransactionDetails> {
  return withTransactionEvents(ctx, enterpriseId, transactionId, async (dbTx) => {
    const after = await moveWebServiceStatus(dbTx, enterpriseId, transactionId, event);
    return { result: after, after };
  });
}

/** The systemStatus moves a workflow may make (pal.transaction.complete and cancel). */
const WORKFLOW_MOVES = {
  complete: TRANSACTION_EVENTS.complete,
  cancel: TRANSACTION_EVENTS.cancel,
};

/** What a job may do and use, from the settings (the service's, or `pal run`'s). */
export function jobBounds(
  config: Pick<Config, 'workflowTimeoutMs' | 'workflowMemoryMb' | 'workflowResultMaxChars'>,
): Pick<SandboxJob, 'moves' | 'timeoutMs' | 'memoryBytes' | 'maxResultLength'> {
  return {
    moves: WORKFLOW_MOVES,
    timeoutMs: config.workflowTimeoutMs,
    memoryBytes: config.workflowMemoryMb * 1024 * 1024,
    maxResultLength: config.workflowResultMaxChars,
  };
}

/** One run in the sandbox pool, its value shaped into the answer (its effects not yet kept). */
async function execute<T>(
  ctx: WorkflowContext,
  enterpriseId: string,
  job: Omit<SandboxJob, 'exportName' | 'inputJson' | keyof ReturnType<typeof jobBounds>>,
  options: RunOptions<T>,
  palId: string,
): Promise<RunOutcome<T>> {
  const outcome = await ctx.engine.pool.run(
    {
      ...job,
      ...jobBounds(ctx.config),
      exportName: options.exportName,
      inputJson: JSON.stringify(await options.input(palId)),
    },
    enterpriseId,
  );
  if (outcome.logs.length > 0)
    ctx.log.info(
      { reqId: options.requestId, palId, module: job.module, logs: outcome.logs },
      'workflow log',
    );
  return shaped(outcome, options.answer.shape, palId);
}

/** The sandbox's outcome with its value shaped; a value that does not fit fails the run. */
export function shaped<T>(
  outcome: SandboxOutcome,
  shape: (value: unknown, palId: string) => T,
  palId: string,
): RunOutcome<T> {
  if (!outcome.ok)
    return { ok: false, type: outcome.type, message: outcome.message, frames: outcome.frames };
  // The result is parsed, shaped and written on the event loop: 380,000 members (3.75 MB, under
  // the size limit) held every tenant's requests for a second and more. A scan of its text for
  // its items first (a few milliseconds for the largest), and as many as a request body may hold.
  if (outcome.value !== undefined && bodyItemsOver(outcome.value, 'json', DEFAULT_BODY_ITEM_LIMIT))
    return {
      ok: false,
      type: 'WORKFLOW_MEMORY',
      message: `the workflow's result holds more than ${DEFAULT_BODY_ITEM_LIMIT} items (values, members and strings)`,
      frames: [],
    };
  try {
    const value = outcome.value === undefined ? undefined : (JSON.parse(outcome.value) as unknown);
    return { ok: true, value: shape(value, palId), effects: outcome.effects };
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    return { ok: false, type: 'WORKFLOW_ERROR', message: error.message, frames: [] };
  }
}

function palCode(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<PalCode> {
  return ctx.engine.palCode(`${enterpriseId}\u0000${palId}\u0000${version}`, () =>
    readPalCode(ctx, enterpriseId, palId, version),
  );
}

async function readPalCode(
  ctx: WorkflowContext,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<PalCode> {
  const [{ manifest, files }, documents] = await Promise.all([
    getPalVersion(ctx, enterpriseId, palId, version),
    getPalDocuments(ctx, enterpriseId, palId, version),
  ]);
  // Module names resolve to normalized paths (`./a/../b.js` is `b.js`): key the files alike.
  const modules = Object.fromEntries(
    Object.entries(manifest.workflows ?? {}).map(([name, path]) => [name, posix.normalize(path)]),
  );
  const sources = Object.fromEntries(
    Object.entries(files).map(([path, source]) => [posix.normalize(path), source]),
  );
  return {
    modules,
    files: sources,
    codeKey: codeKeyOf(enterpriseId, sources),
    documents,
    uploads: (manifest.uploads ?? []).length > 0,
    exports: Object.fromEntries(
      Object.entries(modules).map(([name, path]) => {
        const source = sources[path];
        return [name, source === undefined ? undefined : exportNames(source)];
      }),
    ),
  };
}

/**
 * Why `exportName` of the module cannot run, when its text says so: no such module, or no such
 * export (the sandbox would answer NO_WORKFLOW in the same words); undefined when it may run.
 */
function missingExport(code: PalCode, module: string, exportName: string): string | undefined {
  if (code.modules[module] === undefined) return `the pal has no workflow module "${module}"`;
  const names = code.exports[module];
  if (names === undefined || names.has(exportName)) return undefined;
  return `the workflow module "${module}" has no export "${exportName}"`;
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
