// Transactions: created from a deployed transaction-mode pal (T1), looked up (T10) and searched
// (T2), and moved through the lifecycle of ./transaction-lifecycle.ts.
import type * as Wire from '@pal-workflow/types';
import { sql, type Expression, type SqlBool } from 'kysely';
import { dialectOf, type TextContains } from '../storage/dialect.js';
import { fold } from '../storage/conditions.js';
import type { TransactionRow } from '../storage/schema.js';
import type { DomainContext } from './context.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';
import { randomId } from './ids.js';
import type { PalManifest } from './pal-manifest.js';
import { exactCondition, filterValue, optional, withoutUndefined, type Page } from './search.js';
import {
  INITIAL_STATUS,
  INITIAL_SYSTEM_STATUS,
  INITIAL_WEB_SERVICE_STATUS,
  RUNNABLE_SYSTEM_STATUSES,
  TRANSACTION_EVENTS,
  WEB_SERVICE_EVENTS,
  nextSystemStatus,
  nextWebServiceStatus,
  type SystemStatus,
  type TransactionEvent,
  type WebServiceEvent,
} from './transaction-lifecycle.js';
import { requireId, requireStartRecord, requireText } from './validate.js';

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

/** TransactionSearch of the spec (generated from the XSD); absent booleans are false, an absent startRecord is 0. */
export type TransactionSearch = Partial<Wire.TransactionSearch>;

const DAY_MS = 86_400_000;
const MAX_STATUS_LENGTH = 64;
/** Beyond twice the run time limit: how long RUNNING may stand before a new run may take over. */
const ABANDONED_RUN_GRACE_MS = 30_000;

export function toTransactionInfo(row: TransactionRow): TransactionInfo {
  return withoutUndefined({
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

function toDetails(row: TransactionRow): TransactionDetails {
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
): Promise<TransactionDetails> {
  requireId('palId', palId);
  const pal = await ctx.db
    .selectFrom('pals')
    .select([
      'id',
      'version',
      'name',
      'description',
      'category',
      'test',
      'deployed',
      'mode_transaction',
      'manifest',
    ])
    .where('enterprise_id', '=', enterpriseId)
    .where('id', '=', palId)
    .executeTakeFirst();
  if (!pal) throw NotFoundError.of('pal', palId);
  if (pal.mode_transaction !== 1) {
    throw new InvalidArgumentError(`palId: pal "${palId}" is not a transaction-mode pal`);
  }
  if (pal.deployed !== 1) throw new ConflictError(`pal "${palId}" is not deployed`);

  const lifetimes = (JSON.parse(pal.manifest) as PalManifest).lifetimes ?? {};
  const created = ctx.now();
  const createDate = created.toISOString();
  const row = {
    id: randomId(),
    enterprise_id: enterpriseId,
    pal_id: pal.id,
    pal_version: pal.version,
    name: pal.name,
    name_key: pal.name === null ? null : fold(pal.name),
    description: pal.description,
    description_key: pal.description === null ? null : fold(pal.description),
    category: pal.category,
    category_key: pal.category === null ? null : fold(pal.category),
    status: INITIAL_STATUS,
    system_status: INITIAL_SYSTEM_STATUS,
    web_service_status: INITIAL_WEB_SERVICE_STATUS,
    test: pal.test,
    create_date: createDate,
    modified_date: createDate,
    execute_end_date: endDate(created, lifetimes.executeDays),
    access_end_date: endDate(created, lifetimes.accessDays),
    archive_end_date: endDate(created, lifetimes.archiveDays),
  };
  const inserted = await ctx.db
    .insertInto('transactions')
    .values(row)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toDetails(inserted);
}

async function transactionRow(
  ctx: DomainContext,
  enterpriseId: string,
  id: string,
): Promise<TransactionRow> {
  const row = await ctx.db
    .selectFrom('transactions')
    .selectAll()
    .where('id', '=', requireId('id', id))
    .where('enterprise_id', '=', enterpriseId)
    .executeTakeFirst();
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
  search: TransactionSearch = {},
): Promise<Page<TransactionInfo>> {
  const startRecord = requireStartRecord(search.startRecord);
  const dialect = dialectOf(ctx.db);
  // Text filters: "equals" (exact*) is an ordinary condition; "contains" goes through the
  // dialect's index over name, description and category.
  const conditions: Expression<SqlBool>[] = [];
  const contains: TextContains[] = [];
  for (const [field, column, value, exact] of [
    ['name', 'name', search.name, search.exactName],
    ['description', 'description', search.description, search.exactDescription],
    ['category', 'category', search.category, search.exactCategory],
  ] as const) {
    const needle = filterValue(field, value);
    if (needle === undefined) continue;
    if (exact) conditions.push(sql<SqlBool>`${sql.ref(`transactions.${column}`)} = ${needle}`);
    else contains.push({ column: `${column}_key`, foldedNeedle: fold(needle) });
  }
  for (const [field, column, value] of [
    ['status', 'transactions.status', search.status],
    ['systemStatus', 'transactions.system_status', search.systemStatus],
    ['webServiceStatus', 'transactions.web_service_status', search.webServiceStatus],
    ['palId', 'transactions.pal_id', search.palId],
  ] as const) {
    const condition = exactCondition(field, column, value);
    if (condition) conditions.push(condition);
  }
  const sso = exactCondition('sso', 'transaction_roles.sso_id', search.sso);

  let query = ctx.db
    .selectFrom('transactions')
    .where('transactions.enterprise_id', '=', enterpriseId)
    .$if(!search.includeTest, (q) => q.where('transactions.test', '=', 0))
    .$if(conditions.length > 0, (q) => q.where((eb) => eb.and(conditions)))
    .$if(sso !== undefined, (q) =>
      q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('transaction_roles')
            .select(sql.lit(1).as('one'))
            .whereRef('transaction_roles.transaction_id', '=', 'transactions.id')
            .where(sso!),
        ),
      ),
    );
  let creationOrder: Expression<number> = sql.ref<number>('transactions.seq');
  if (contains.length > 0)
    ({ query, creationOrder } = dialect.whereTransactionTextsContain(query, contains));

  const [count, rows] = await Promise.all([
    dialect.countUpTo(ctx.db, query, ctx.config.totalCountCap, contains.length > 0),
    query
      .selectAll('transactions')
      .orderBy(creationOrder)
      .limit(ctx.config.pageSize)
      .offset(startRecord)
      .execute(),
  ]);
  return { items: rows.map(toTransactionInfo), ...count };
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
  for (;;) {
    const row = await transactionRow(ctx, enterpriseId, id);
    const to = nextSystemStatus(row.system_status, event);
    const result = await ctx.db
      .updateTable('transactions')
      .set({ system_status: to, modified_date: ctx.now().toISOString() })
      .where('id', '=', id)
      .where('enterprise_id', '=', enterpriseId)
      .where('system_status', '=', row.system_status)
      .executeTakeFirst();
    // Lost a race: read the new state and judge the move again.
    if (result.numUpdatedRows > 0n) return getTransactionDetails(ctx, enterpriseId, id);
  }
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
  const result = await ctx.db
    .updateTable('transactions')
    .set({ status: clean, modified_date: ctx.now().toISOString() })
    .where('id', '=', id)
    .where('enterprise_id', '=', enterpriseId)
    .where('system_status', '<>', 'ARCHIVED')
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n)
    throw new ConflictError('an archived transaction cannot change its status');
  return getTransactionDetails(ctx, enterpriseId, id);
}

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
  const moved = await ctx.db
    .updateTable('transactions')
    .set({
      web_service_status: WEB_SERVICE_EVENTS[event].to,
      modified_date: ctx.now().toISOString(),
    })
    .where('id', '=', id)
    .where('enterprise_id', '=', enterpriseId)
    .where('web_service_status', 'in', WEB_SERVICE_EVENTS[event].from)
    .$if(event === 'start', (q) => q.where('system_status', 'in', RUNNABLE_SYSTEM_STATUSES))
    .returningAll()
    .executeTakeFirst();
  if (moved) return toDetails(moved);
  // Otherwise read the row and judge the move, for the error that says why (or a lost race).
  for (;;) {
    const row = await transactionRow(ctx, enterpriseId, id);
    if (
      event === 'start' &&
      !(RUNNABLE_SYSTEM_STATUSES as readonly string[]).includes(row.system_status)
    ) {
      throw new ConflictError(
        `the web-service workflow cannot run while systemStatus is ${row.system_status}`,
      );
    }
    const to = abandonedRun(ctx, row, event)
      ? 'RUNNING'
      : nextWebServiceStatus(row.web_service_status, event);
    const result = await ctx.db
      .updateTable('transactions')
      .set({ web_service_status: to, modified_date: ctx.now().toISOString() })
      .where('id', '=', id)
      .where('enterprise_id', '=', enterpriseId)
      .where('web_service_status', '=', row.web_service_status)
      .where('system_status', '=', row.system_status)
      .where('modified_date', '=', row.modified_date)
      .executeTakeFirst();
    if (result.numUpdatedRows > 0n) return getTransactionDetails(ctx, enterpriseId, id);
  }
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
  const expired = await ctx.db
    .updateTable('transactions')
    .set({ system_status: TRANSACTION_EVENTS.expire.to, modified_date: now })
    .where('system_status', 'in', TRANSACTION_EVENTS.expire.from)
    .where('execute_end_date', '<=', now)
    .executeTakeFirst();
  const archived = await ctx.db
    .updateTable('transactions')
    .set({ system_status: TRANSACTION_EVENTS.archive.to, modified_date: now })
    .where('system_status', 'in', TRANSACTION_EVENTS.archive.from)
    .where('access_end_date', '<=', now)
    .executeTakeFirst();
  return { expired: Number(expired.numUpdatedRows), archived: Number(archived.numUpdatedRows) };
}
