// The transactions table: inserts, look-ups, conditional updates and the T2 search. "Contains"
// filters go through the dialect's text index (storage-dialect.ts).
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from './database.js';
import { dialectOf } from './adapter-dialect.js';
import { chosenRows } from './chosen-rows.js';
import { type EveryColumn, preparedQuery, type PreparedQuery } from './prepared-query.js';
import type { CappedCount, TextContains } from './storage-dialect.js';
import type {
  IsoDate,
  NewTransaction,
  TransactionRow,
  TransactionsTable,
  TransactionUpdate,
} from './schema.js';
import { equals, fold, type TextFilter } from './text-filters.js';

/**
 * What T2 asks of the transactions table (docs/decisions.md, "Searches"); absent members do not
 * filter.
 */
export interface TransactionRowQuery {
  enterpriseId: string;
  texts: readonly TextFilter[];
  includeTest: boolean;
  status?: string;
  systemStatus?: string;
  webServiceStatus?: string;
  palId?: string;
  /** Transactions on which this SSO holds a role. */
  sso?: string;
  offset: number;
  limit: number;
  /** Count the matches up to this many; past it the total is the cap, as a lower bound. */
  countCap: number;
}

/**
 * The columns a T2 answer shows (domain/transactions.ts, toTransactionInfo). A page reads only
 * these: the folded copies of the texts and the keys it does not show are some 40 % of a row's
 * bytes (the bench's rows: 664 bytes, 391 shown), and every byte read is parsed and kept until
 * the answer is written.
 */
const TRANSACTION_INFO_COLUMNS = [
  'id',
  'name',
  'description',
  'category',
  'status',
  'web_service_status',
  'create_date',
  'execute_end_date',
  'access_end_date',
  'archive_end_date',
  'modified_date',
  'test',
] as const satisfies readonly (keyof TransactionRow)[];

/** A transaction as a T2 page reads it. */
export type TransactionInfoRow = Pick<TransactionRow, (typeof TRANSACTION_INFO_COLUMNS)[number]>;

const PAGE_COLUMNS = TRANSACTION_INFO_COLUMNS.map((column) => `transactions.${column}` as const);

const insertQuery = preparedQuery((db, p: Required<Omit<NewTransaction, 'seq'>>) =>
  db
    .insertInto('transactions')
    .values({
      id: p.id,
      enterprise_id: p.enterprise_id,
      pal_id: p.pal_id,
      pal_version: p.pal_version,
      name: p.name,
      name_key: p.name_key,
      description: p.description,
      description_key: p.description_key,
      category: p.category,
      category_key: p.category_key,
      status: p.status,
      system_status: p.system_status,
      web_service_status: p.web_service_status,
      test: p.test,
      create_date: p.create_date,
      modified_date: p.modified_date,
      execute_end_date: p.execute_end_date,
      access_end_date: p.access_end_date,
      archive_end_date: p.archive_end_date,
    } satisfies EveryColumn<TransactionsTable, 'seq'>)
    .returningAll(),
);

export async function insertTransaction(
  db: Db,
  row: Required<Omit<NewTransaction, 'seq'>>,
): Promise<TransactionRow> {
  const inserted = await insertQuery.executeTakeFirst(db, row);
  if (inserted === undefined) throw new Error('the inserted transaction was not returned');
  return inserted;
}

interface TransactionKey {
  id: string;
  enterpriseId: string;
}

function selectTransaction(db: Db, p: TransactionKey) {
  return db
    .selectFrom('transactions')
    .selectAll()
    .where('id', '=', p.id)
    .where('enterprise_id', '=', p.enterpriseId);
}

const transactionQuery = preparedQuery(selectTransaction);
const lockedTransactionQuery = preparedQuery((db, p: TransactionKey) =>
  dialectOf(db).forUpdate(selectTransaction(db, p)),
);

/** `lock`: hold the row until the surrounding transaction ends (dialect forUpdate). */
export function findTransactionRow(
  db: Db,
  enterpriseId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<TransactionRow | undefined> {
  return (options.lock ? lockedTransactionQuery : transactionQuery).executeTakeFirst(db, {
    id,
    enterpriseId,
  });
}

/**
 * Updates the enterprise's transaction only while its columns still hold `expected` (a
 * compare-and-set), and not in `systemStatusNot` when given. Returns the updated row, or
 * undefined when no row matched (another writer won, or there is no such transaction).
 */
export function updateTransactionIf(
  db: Db,
  enterpriseId: string,
  id: string,
  conditions: {
    expected?: Partial<
      Pick<TransactionRow, 'system_status' | 'web_service_status' | 'modified_date'>
    >;
    systemStatusNot?: string;
  },
  set: TransactionUpdate,
): Promise<TransactionRow | undefined> {
  const { expected = {}, systemStatusNot } = conditions;
  return db
    .updateTable('transactions')
    .set(set)
    .where('id', '=', id)
    .where('enterprise_id', '=', enterpriseId)
    .$if(expected.system_status !== undefined, (q) =>
      q.where('system_status', '=', expected.system_status!),
    )
    .$if(expected.web_service_status !== undefined, (q) =>
      q.where('web_service_status', '=', expected.web_service_status!),
    )
    .$if(expected.modified_date !== undefined, (q) =>
      q.where('modified_date', '=', expected.modified_date!),
    )
    .$if(systemStatusNot !== undefined, (q) => q.where('system_status', '<>', systemStatusNot!))
    .returningAll()
    .executeTakeFirst();
}

/**
 * A move of the web-service status: from any of `from`, while the system status is one of
 * `systemStatusIn` when given. The lists are constants of the domain, built into the query once
 * (as bound constants).
 */
export interface WebServiceMove {
  readonly from: readonly string[];
  readonly to: string;
  readonly systemStatusIn?: readonly string[];
}

const webServiceMoveQueries = new WeakMap<
  WebServiceMove,
  PreparedQuery<{ id: string; enterpriseId: string; now: IsoDate }, TransactionRow>
>();

/**
 * updateTransactionIf for a move of the web-service status (twice in every T6 run), compiled once
 * per move. Returns the updated row, or undefined when the row is in no state the move starts
 * from (or there is no such transaction).
 */
export function moveWebServiceStatusIf(
  db: Db,
  enterpriseId: string,
  id: string,
  move: WebServiceMove,
  now: IsoDate,
): Promise<TransactionRow | undefined> {
  let query = webServiceMoveQueries.get(move);
  if (query === undefined) {
    query = preparedQuery((db, p: { id: string; enterpriseId: string; now: IsoDate }) =>
      db
        .updateTable('transactions')
        .set({ web_service_status: move.to, modified_date: p.now })
        .where('id', '=', p.id)
        .where('enterprise_id', '=', p.enterpriseId)
        .where('web_service_status', 'in', move.from)
        .$if(move.systemStatusIn !== undefined, (q) =>
          q.where('system_status', 'in', move.systemStatusIn!),
        )
        .returningAll(),
    );
    webServiceMoveQueries.set(move, query);
  }
  return query.executeTakeFirst(db, { id, enterpriseId, now });
}

/**
 * Moves at most `limit` transactions in `from` whose `dateColumn` has passed to `to`; the rows
 * moved, with the states their events report. On PostgreSQL one a workflow holds is left for the
 * next sweep.
 */
export async function moveDueTransactions(
  db: Db,
  from: string,
  dateColumn: 'execute_end_date' | 'access_end_date',
  to: string,
  now: string,
  limit: number,
): Promise<
  Pick<TransactionRow, 'id' | 'enterprise_id' | 'pal_id' | 'status' | 'web_service_status'>[]
> {
  const due = chosenRows(
    db,
    db
      .selectFrom('transactions')
      .select('seq')
      .where('system_status', '=', from)
      .where(dateColumn, '<=', now),
    limit,
  );
  return db
    .updateTable('transactions')
    .set({ system_status: to, modified_date: now })
    .where('seq', 'in', due)
    .returning(['id', 'enterprise_id', 'pal_id', 'status', 'web_service_status'])
    .execute();
}

/**
 * One page of the transactions matching the query, in creation order, and how many match: exact
 * up to `countCap`, past it the cap with totalRelation `gte`.
 */
export async function searchTransactionRows(
  db: Db,
  q: TransactionRowQuery,
): Promise<{ rows: TransactionInfoRow[] } & CappedCount> {
  // "Equals" (exact) is an ordinary condition; "contains" goes through the dialect's index.
  const conditions: Expression<SqlBool>[] = [];
  const contains: TextContains[] = [];
  for (const filter of q.texts) {
    if (filter.column === 'publisher') continue; // transactions have no publisher
    if (filter.exact) conditions.push(equals('transactions', filter.column, filter.value));
    else contains.push({ column: `${filter.column}_key`, foldedNeedle: fold(filter.value) });
  }
  const { sso } = q;
  let query = db
    .selectFrom('transactions')
    .where('transactions.enterprise_id', '=', q.enterpriseId)
    .$if(!q.includeTest, (b) => b.where('transactions.test', '=', 0))
    .$if(q.status !== undefined, (b) => b.where('transactions.status', '=', q.status!))
    .$if(q.systemStatus !== undefined, (b) =>
      b.where('transactions.system_status', '=', q.systemStatus!),
    )
    .$if(q.webServiceStatus !== undefined, (b) =>
      b.where('transactions.web_service_status', '=', q.webServiceStatus!),
    )
    .$if(q.palId !== undefined, (b) => b.where('transactions.pal_id', '=', q.palId!))
    .$if(conditions.length > 0, (b) => b.where((eb) => eb.and(conditions)))
    .$if(sso !== undefined, (b) =>
      b.where((eb) =>
        eb.exists(
          eb
            .selectFrom('transaction_roles')
            .select(sql.lit(1).as('one'))
            .whereRef('transaction_roles.transaction_id', '=', 'transactions.id')
            .where('transaction_roles.sso_id', '=', sso!),
        ),
      ),
    );
  const dialect = dialectOf(db);
  let creationOrder: Expression<number> = sql.ref<number>('transactions.seq');
  if (contains.length > 0)
    ({ query, creationOrder } = dialect.whereTransactionTextsContain(query, contains));

  const [count, rows] = await Promise.all([
    dialect.countUpTo(db, query, q.countCap, contains.length > 0),
    query.select(PAGE_COLUMNS).orderBy(creationOrder).limit(q.limit).offset(q.offset).execute(),
  ]);
  return { rows, ...count };
}
