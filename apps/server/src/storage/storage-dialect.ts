// The seam between portable storage code and what only one database accepts. Everything above
// this interface (migrations, repositories, searches) is written with Kysely's query builder in
// SQL that SQLite and PostgreSQL both run; each database's peculiarities (pragmas, the full-text
// index behind "name contains") live in one module per database: ./sqlite.ts and ./postgres.ts,
// chosen by ./adapter-dialect.ts.
import type { CreateTableBuilder, Expression, Kysely, SelectQueryBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import { equals, fold, likeContains, type TextFilter } from './text-filters.js';

/** The case-folded text columns of transactions that "contains" searches use. */
export type TransactionTextColumn = 'name_key' | 'description_key' | 'category_key';

/** One "contains" filter: the column and the needle, folded as the column is. */
export interface TextContains {
  column: TransactionTextColumn;
  foldedNeedle: string;
}

/** A count that stopped at a cap: `gte` when there are at least `total` rows; absent: exact. */
export interface CappedCount {
  total: number;
  totalRelation?: 'gte';
}

/** `select count(*) from (query limit cap + 1)`, read as a CappedCount. */
export async function cappedCount(
  db: Kysely<any>,
  query: TransactionsQuery,
  cap: number,
): Promise<CappedCount> {
  const { n } = await db
    .selectFrom(
      query
        .select(sql.lit(1).as('one'))
        .limit(cap + 1)
        .as('capped'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const count = Number(n);
  return count > cap ? { total: cap, totalRelation: 'gte' } : { total: count };
}

/** A query over the transactions table, before its selection. */
export type TransactionsQuery = SelectQueryBuilder<DatabaseSchema, 'transactions', {}>;

/** A query over the pals table, before its selection. */
export type PalsQuery = SelectQueryBuilder<DatabaseSchema, 'pals', {}>;

/**
 * The string filters of P1 and C1 as conditions on `pals`, for the engines' wherePalTextsMatch:
 * "contains" is LIKE on the folded `_key` column, `exact` is equality on the column itself;
 * `matchAny` ORs them, otherwise they AND.
 */
export function wherePalTextsLike(
  query: PalsQuery,
  filters: readonly TextFilter[],
  matchAny: boolean,
): PalsQuery {
  if (filters.length === 0) return query;
  const conditions = filters.map(palTextCondition);
  return query.where((eb) => (matchAny ? eb.or(conditions) : eb.and(conditions)));
}

/** One P1/C1 string filter as a condition on `pals` (see wherePalTextsLike). */
export function palTextCondition(filter: TextFilter): Expression<SqlBool> {
  return filter.exact
    ? equals('pals', filter.column, filter.value)
    : likeContains(`pals.${filter.column}_key`, fold(filter.value));
}

export interface StorageDialect {
  readonly name: 'sqlite' | 'postgres';
  /** The column type of bytes (document files): SQLite's BLOB, PostgreSQL's BYTEA. */
  readonly binaryType: 'blob' | 'bytea';
  /** Adds an auto-incrementing integer primary-key column to a table being created. */
  serialPrimaryKey<T extends string>(
    table: CreateTableBuilder<T, never>,
    column: string,
  ): CreateTableBuilder<T, never>;
  /** Creates (in a migration) the index that serves "contains" searches of transaction texts. */
  createTransactionTextIndex(db: Kysely<any>): Promise<void>;
  dropTransactionTextIndex(db: Kysely<any>): Promise<void>;
  /**
   * (Migration 0025.) Lets a connection that writes in batches index its new rows once per batch
   * instead of once per insert (SQLite: sqlite.ts, createTextIndexTriggers); PostgreSQL's indexes
   * need nothing. `undefer` is its down.
   */
  deferTransactionTextIndex(db: Kysely<any>): Promise<void>;
  undeferTransactionTextIndex(db: Kysely<any>): Promise<void>;
  /**
   * Narrows a query over `transactions` to the rows whose folded texts contain every given needle
   * (name, description, category: AND), and names the expression that orders the narrowed rows by
   * creation (`transactions.seq`, or an equal column that the index returns in order) at least cost.
   */
  whereTransactionTextsContain(
    query: TransactionsQuery,
    filters: readonly TextContains[],
  ): { query: TransactionsQuery; creationOrder: Expression<number> };
  /**
   * Creates (in a migration, 0006) the index that serves the "contains" filters of P1 and C1 over
   * the folded texts of pals (name, description, category, publisher).
   */
  createPalTextIndex(db: Kysely<any>): Promise<void>;
  dropPalTextIndex(db: Kysely<any>): Promise<void>;
  /**
   * Narrows a query over `pals` to the rows that the P1/C1 string filters select: "contains"
   * (case-insensitive, against the folded `_key` column) or, with `exact`, case-sensitive
   * equality; `matchAny` ORs the filters, otherwise they AND. The same rows as wherePalTextsLike,
   * found through the index of createPalTextIndex where the engine can.
   */
  wherePalTextsMatch(
    query: PalsQuery,
    filters: readonly TextFilter[],
    matchAny: boolean,
  ): PalsQuery;
  /**
   * Counts the rows of a query over `transactions`, but stops after `cap`: an exact count of
   * 50,000 matches costs far more than the page it comes with. Past the cap the answer is the
   * cap, as a lower bound. `textSearch`: the query went through whereTransactionTextsContain.
   */
  countUpTo(
    db: Kysely<any>,
    query: TransactionsQuery,
    cap: number,
    textSearch: boolean,
  ): Promise<CappedCount>;
  /** True when `error` is the database refusing a duplicate key (unique or primary key). */
  isUniqueViolation(error: unknown): boolean;
  /** The error of a `noWait` lock (forUpdate) that another transaction held: PostgreSQL 55P03. */
  isLockNotAvailable(error: unknown): boolean;
  /**
   * A value that changes whenever the data may have changed, by this process or another; read
   * caches start afresh when it moves. Undefined when this handle cannot tell (then do not cache).
   * This process's own writes move it at once; another process's commits within
   * `changeStampBoundMs`. On PostgreSQL only writes to the tables given to
   * createChangeStampTriggers (migration 0004) count as another process's: cache nothing else.
   */
  changeStamp(db: Kysely<any>): string | undefined;
  /**
   * Like changeStamp, but not moved by this process's own writes as they run: for caches whose
   * own changes are announced otherwise (the credentials cache hears of them from
   * `clientChanges`), so that they are not dropped by every write this process makes. Moves
   * within `changeStampBoundMs` of another process's commit, as changeStamp does (on PostgreSQL,
   * of a write to a table given to createChangeStampTriggers). Undefined: do not cache.
   */
  sharedChangeStamp(db: Kysely<any>): string | undefined;
  /** How long another process's commit may stay unseen by changeStamp. */
  readonly changeStampBoundMs: number;
  /** Brings changeStamp up to date now (after opening, so caching starts at once). */
  refreshChangeStamp(db: Kysely<any>): Promise<void>;
  /**
   * Runs `work` unless another process runs work under the same name right now (then answers
   * undefined at once): PostgreSQL, a session advisory lock, so of several nodes one sweeps at a
   * time; SQLite, which only one server uses, runs it.
   */
  runExclusively<T>(db: Kysely<any>, name: string, work: () => Promise<T>): Promise<T | undefined>;
  /**
   * Creates (in a migration, 0010) where the nodes share their rate-limit counts: on PostgreSQL
   * the unlogged table that rate-limiter-flexible's store expects (storage/rate-counts.ts); on
   * SQLite nothing, as each process counts in memory.
   */
  createRateCountTable(db: Kysely<any>): Promise<void>;
  dropRateCountTable(db: Kysely<any>): Promise<void>;
  /**
   * Locks the rows a select reads until the transaction ends: PostgreSQL `FOR UPDATE`, with
   * `skipLocked` passing over rows another transaction holds (so several nodes claim different
   * outbox messages without waiting on each other), `noWait` failing at once on such a row
   * (isLockNotAvailable), and `of` locking the rows of that table alone in a join. SQLite, whose
   * writers take turns, reads them as they are.
   */
  forUpdate<Q extends SelectQueryBuilder<any, any, any>>(
    query: Q,
    options?: { skipLocked?: boolean; noWait?: boolean; of?: string },
  ): Q;
  /**
   * Says that outbox messages were written: once the transaction of `db` commits (never if it
   * rolls back), every listenOutbox listener hears of it. PostgreSQL: NOTIFY, heard by every node
   * of the database; SQLite: the listeners of this process (another process is found by polling).
   */
  announceOutbox(db: Kysely<any>): Promise<void>;
  /** Calls `listener` on every announceOutbox; resolves to the function that stops listening. */
  listenOutbox(db: Kysely<any>, listener: () => void): Promise<() => Promise<void>>;
  /** Creates (in a migration) what moves the database's change stamp on writes to `tables`. */
  createChangeStampTriggers(db: Kysely<any>, tables: readonly string[]): Promise<void>;
  dropChangeStampTriggers(db: Kysely<any>, tables: readonly string[]): Promise<void>;
}
