// Transactions: created from a deployed transaction-mode pal (T1), looked up (T10) and searched
// (T2), and moved through the lifecycle of ./transaction-lifecycle.ts.
import type { Page } from '@pal-workflow/server-skeleton';
import type * as Wire from '@pal-workflow/types';
import type { TransactionRow } from '../storage/schema.js';
import { foldedKey } from '../storage/text-filters.js';
import {
  findTransactionRow,
  insertTransaction,
  moveDueTransactions,
  moveWebServiceStatusIf,
  searchTransactionRows,
  updateTransactionIf,
  type TransactionInfoRow,
  type WebServiceMove,
} from '../storage/transactions.js';
import type { DomainContext } from './context.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';
import { emitEvent, emitEvents } from './events.js';
import { randomId } from './ids.js';
import { getPalDetails, type PalDetails } from './pals.js';
import { filterValue, optional, textFilters, withoutUndefined } from './search.js';
import {
  INITIAL_STATUS,
  INITIAL_SYSTEM_STATUS,
  INITIAL_WEB_SERVICE_STATUS,
  RUNNABLE_SYSTEM_STATUSES,
  requireRunnable,
  TRANSACTION_EVENTS,
  WEB_SERVICE_EVENTS,
  nextSystemStatus,
  nextWebServiceStatus,
  type SystemStatus,
  type TransactionEvent,
  type WebServiceEvent,
} from './transaction-lifecycle.js';
import { bulkMoveEvents } from './transaction-events.js';
import { inTransaction } from './transact.js';
import { requireId, requireText } from './validate.js';
import { inSweepBatches } from './sweep-batches.js';

/** The spec's TransactionInfo (generated from the XSD): absent strings are left out, dates are ISO-8601; the domain always knows the id. */
export type TransactionInfo = Wire.TransactionInfo & { id: string };

/** Everything the service knows of a transaction, for the domain's own use. */
export interface TransactionDetails extends TransactionInfo {
  enterpriseId: string;
  palId: string;
  palVersion: number;
  systemStatus: SystemStatus;
  status: string;
  webServiceStatus: string;
}

/** TransactionSearch of the spec, as the skeleton reads it from the search headers (absent booleans false, startRecord 0). */
export type TransactionSearch = Wire.TransactionSearch;

const DAY_MS = 86_400_000;
const MAX_STATUS_LENGTH = 64;
/** Beyond twice the run time limit: how long RUNNING may stand before a new run may take over. */
const ABANDONED_RUN_GRACE_MS = 30_000;

export function toTransactionInfo(row: TransactionInfoRow): TransactionInfo {
  return withoutUndefined<TransactionInfo>({
    id: row.id,
    name: optional(row.name),
    description: optional(row.description),
    category: optional(row.category),
    status: row.status,
    webServiceStatus: row.web_service_status,
    createDate: row.create_date,
    executeEndDate: optional(row.execute_end_date),
    accessEndDate: optional(row.access_end_date),
    archiveEndDate: optional(row.archive_end_date),
    modifiedDate: row.modified_date,
    test: row.test === 1,
  });
}

/** A stored transaction row as the domain names it. */
export function toDetails(row: TransactionRow): TransactionDetails {
  return {
    ...toTransactionInfo(row),
    enterpriseId: row.enterprise_id,
    palId: row.pal_id,
    palVersion: row.pal_version,
    systemStatus: row.system_status as SystemStatus,
    status: row.status,
    webServiceStatus: row.web_service_status,
  };
}

function endDate(created: Date, days: number | undefined): string | null {
  return days === undefined ? null : new Date(created.getTime() + days * DAY_MS).toISOString();
}

/**
 * T1: a new transaction from a pal of the enterprise. Name, description, category and the test
 * flag come from the pal; the end dates from its manifest's lifetimes, when given.
 * 404: no such pal in the enterprise; 400: not a transaction-mode pal; 409: not deployed.
 */
export async function createTransaction(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  /** The pal as read already (P3 reads it before its commit). */
  known?: PalDetails,
): Promise<TransactionDetails> {
  const pal =
    known?.id === palId && known.enterpriseId === enterpriseId
      ? known
      : await getPalDetails(ctx, enterpriseId, palId);
  if (!pal.modeTransaction) {
    throw new InvalidArgumentError(`palId: pal "${palId}" is not a transaction-mode pal`);
  }
  if (!pal.deployed) throw new ConflictError(`pal "${palId}" is not deployed`);

  const lifetimes = pal.manifest.lifetimes ?? {};
  const created = ctx.now();
  const createDate = created.toISOString();
  const row = {
    id: randomId(),
    enterprise_id: enterpriseId,
    pal_id: pal.id,
    pal_version: pal.version,
    name: pal.name ?? null,
    name_key: foldedKey(pal.name),
    description: pal.description ?? null,
    description_key: foldedKey(pal.description),
    category: pal.category ?? null,
    category_key: foldedKey(pal.category),
    status: INITIAL_STATUS,
    system_status: INITIAL_SYSTEM_STATUS,
    web_service_status: INITIAL_WEB_SERVICE_STATUS,
    test: pal.test ? 1 : 0,
    create_date: createDate,
    modified_date: createDate,
    execute_end_date: endDate(created, lifetimes.executeDays),
    access_end_date: endDate(created, lifetimes.accessDays),
    archive_end_date: endDate(created, lifetimes.archiveDays),
  };
  return inTransaction(ctx, async (dbTx) => {
    const inserted = toDetails(await insertTransaction(dbTx.db, row));
    await emitEvent(dbTx, enterpriseId, 'transaction.created', {
      transactionId: inserted.id,
      palId: inserted.palId,
      status: inserted.status,
      systemStatus: inserted.systemStatus,
      webServiceStatus: inserted.webServiceStatus,
    });
    return inserted;
  });
}

async function transactionRow(
  ctx: DomainContext,
  enterpriseId: string,
  id: string,
): Promise<TransactionRow> {
  const row = await findTransactionRow(ctx.db, enterpriseId, requireId('id', id));
  if (!row) throw NotFoundError.of('transaction', id);
  return row;
}

/** T10: a transaction of the enterprise. 404 when the enterprise has no such transaction. */
export async function getTransaction(
  ctx: DomainContext,
  enterpriseId: string,
  id: string,
): Promise<TransactionInfo> {
  return toTransactionInfo(await transactionRow(ctx, enterpriseId, id));
}

/** The whole transaction (palId, systemStatus, …). 404 as getTransaction. */
export async function getTransactionDetails(
  ctx: DomainContext,
  enterpriseId: string,
  id: string,
): Promise<TransactionDetails> {
  return toDetails(await transactionRow(ctx, enterpriseId, id));
}

/**
 * T2: the enterprise's transactions matching the search, in creation order. All filters AND:
 * - name, description, category: "contains" ignoring case, or with exact* case-sensitive equality;
 * - status, systemStatus, webServiceStatus, palId: exact;
 * - sso: transactions on which that SSO holds a role;
 * - test transactions are left out unless includeTest;
 * - startRecord: 0-based offset; a page holds PAGE_SIZE items; `total` counts the matches up to
 *   TOTAL_COUNT_CAP (past it: the cap, as a lower bound).
 */
export async function searchTransactions(
  ctx: DomainContext,
  enterpriseId: string,
  search: TransactionSearch,
): Promise<Page<TransactionInfo>> {
  const { rows, total, totalRelation } = await searchTransactionRows(ctx.db, {
    enterpriseId,
    texts: textFilters(search, ['name', 'description', 'category']),
    includeTest: search.includeTest,
    status: filterValue(search.status),
    systemStatus: filterValue(search.systemStatus),
    webServiceStatus: filterValue(search.webServiceStatus),
    palId: filterValue(search.palId),
    sso: filterValue(search.sso),
    offset: search.startRecord,
    limit: ctx.config.pageSize,
    countCap: ctx.config.totalCountCap,
  });
  // Exact counts say nothing more; a capped one says it is a lower bound.
  const items = rows.map(toTransactionInfo);
  return totalRelation === 'gte' ? { items, total, totalRelation } : { items, total };
}

/**
 * Runs `attempt` until it does not lose a race: each attempt reads the row, judges the move and
 * makes a conditional update, answering undefined when another writer changed the row first.
 */
async function untilNoLostRace<T>(attempt: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const done = await attempt();
    if (done !== undefined) return done;
  }
}

/**
 * Moves the transaction's systemStatus by `event` (see transaction-lifecycle.ts).
 * 404: no such transaction in the enterprise; 409: the move is not allowed from its state.
 * The update is conditional on the state it was read in, so concurrent moves cannot both win.
 */
export async function transitionTransaction(
  ctx: DomainContext,
  enterpriseId: string,
  id: string,
  event: TransactionEvent,
): Promise<TransactionDetails> {
  if (!Object.hasOwn(TRANSACTION_EVENTS, event)) {
    throw new InvalidArgumentError(
      `event: expected one of ${Object.keys(TRANSACTION_EVENTS).join(', ')}`,
    );
  }
  const moved = await untilNoLostRace(async () => {
    const row = await transactionRow(ctx, enterpriseId, id);
    const to = nextSystemStatus(row.system_status, event);
    return updateTransactionIf(
      ctx.db,
      enterpriseId,
      id,
      { expected: { system_status: row.system_status } },
      { system_status: to, modified_date: ctx.now().toISOString() },
    );
  });
  return toDetails(moved);
}

/**
 * Sets the business status a workflow gives the transaction (free text, 1 to 64 characters).
 * 409 once the transaction is ARCHIVED.
 */
export async function setTransactionStatus(
  ctx: DomainContext,
  enterpriseId: string,
  id: string,
  status: string,
): Promise<TransactionDetails> {
  const clean = requireText('status', status, MAX_STATUS_LENGTH);
  await transactionRow(ctx, enterpriseId, id);
  const updated = await updateTransactionIf(
    ctx.db,
    enterpriseId,
    id,
    { systemStatusNot: 'ARCHIVED' },
    { status: clean, modified_date: ctx.now().toISOString() },
  );
  if (!updated) throw new ConflictError('an archived transaction cannot change its status');
  return toDetails(updated);
}

/** Each event's move in one statement, when the row is in a state it starts from. */
const WEB_SERVICE_MOVES: Record<WebServiceEvent, WebServiceMove> = {
  start: { ...WEB_SERVICE_EVENTS.start, systemStatusIn: RUNNABLE_SYSTEM_STATUSES },
  succeed: WEB_SERVICE_EVENTS.succeed,
  fail: WEB_SERVICE_EVENTS.fail,
};

/**
 * Moves webServiceStatus by `event`: `start` before the web-service workflow runs (409 when it is
 * already running, or when systemStatus is neither OPEN nor COMPLETED), `succeed` or `fail` after.
 */
export async function moveWebServiceStatus(
  ctx: DomainContext,
  enterpriseId: string,
  id: string,
  event: WebServiceEvent,
): Promise<TransactionDetails> {
  // The common case in one statement: the move is allowed from the state the row is in.
  const moved = await moveWebServiceStatusIf(
    ctx.db,
    enterpriseId,
    id,
    WEB_SERVICE_MOVES[event],
    ctx.now().toISOString(),
  );
  if (moved) return toDetails(moved);
  // Otherwise read the row and judge the move, for the error that says why (or a lost race).
  const judged = await untilNoLostRace(async () => {
    const row = await transactionRow(ctx, enterpriseId, id);
    if (event === 'start') requireRunnable(row.system_status);
    const to = abandonedRun(ctx, row, event)
      ? 'RUNNING'
      : nextWebServiceStatus(row.web_service_status, event);
    return updateTransactionIf(
      ctx.db,
      enterpriseId,
      id,
      {
        expected: {
          web_service_status: row.web_service_status,
          system_status: row.system_status,
          modified_date: row.modified_date,
        },
      },
      { web_service_status: to, modified_date: ctx.now().toISOString() },
    );
  });
  return toDetails(judged);
}

/**
 * A run that says RUNNING long after any run could have ended: its server stopped in the middle
 * (a crash, a kill). A new run may start over it instead of answering 409 for ever.
 */
function abandonedRun(ctx: DomainContext, row: TransactionRow, event: WebServiceEvent): boolean {
  if (event !== 'start' || row.web_service_status !== 'RUNNING') return false;
  const boundMs = 2 * ctx.config.workflowTimeoutMs + ABANDONED_RUN_GRACE_MS;
  return ctx.now().getTime() - Date.parse(row.modified_date) > boundMs;
}

/**
 * The service's sweep, across all enterprises: OPEN transactions whose executeEndDate has passed
 * become EXPIRED; COMPLETED, CANCELLED and EXPIRED ones whose accessEndDate has passed become
 * ARCHIVED. Returns how many moved. Safe to run at any time and on several nodes.
 */
export async function expireDueTransactions(
  ctx: DomainContext,
): Promise<{ expired: number; archived: number }> {
  const now = ctx.now().toISOString();
  const { expire, archive } = TRANSACTION_EVENTS;
  // One move per state left, so that each event knows the state the transaction left.
  const move = async (
    from: readonly string[],
    dateColumn: 'execute_end_date' | 'access_end_date',
    to: string,
  ) => {
    let moved = 0;
    for (const state of from) {
      moved += await inSweepBatches((limit) =>
        inTransaction(ctx, async (dbTx) => {
          const rows = await moveDueTransactions(dbTx.db, state, dateColumn, to, now, limit);
          await emitEvents(dbTx, bulkMoveEvents(rows, state, to));
          return rows.length;
        }),
      );
    }
    return moved;
  };
  const expired = await move(expire.from, 'execute_end_date', expire.to);
  const archived = await move(archive.from, 'access_end_date', archive.to);
  return { expired, archived };
}
