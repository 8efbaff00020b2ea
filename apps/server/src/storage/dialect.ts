// The seam between portable storage code and what only one database accepts. Everything above
// this interface (migrations, repositories, searches) is written with Kysely's query builder in
// SQL that SQLite and PostgreSQL both run; each database's peculiarities (pragmas, the full-text
// index behind "name contains") live in one module per database: today ./sqlite.ts only, chosen by ./dialect-of.ts.
import type { CreateTableBuilder, Expression, Kysely, SelectQueryBuilder } from 'kysely';
import type { DatabaseSchema } from './schema.js';

/** The case-folded text columns of transactions that "contains" searches use. */
export type TransactionTextColumn = 'name_key' | 'description_key' | 'category_key';

/** One "contains" filter: the column and the needle, folded as the column is. */
export interface TextContains {
  column: TransactionTextColumn;
  foldedNeedle: string;
}

/** A query over the transactions table, before its selection. */
export type TransactionsQuery = SelectQueryBuilder<DatabaseSchema, 'transactions', {}>;

export interface StorageDialect {
  readonly name: 'sqlite' | 'postgres';
  /** Adds an auto-incrementing integer primary-key column to a table being created. */
  serialPrimaryKey<T extends string>(
    table: CreateTableBuilder<T, never>,
    column: string,
  ): CreateTableBuilder<T, never>;
  /** Creates (in a migration) the index that serves "contains" searches of transaction texts. */
  createTransactionTextIndex(db: Kysely<unknown>): Promise<void>;
  dropTransactionTextIndex(db: Kysely<unknown>): Promise<void>;
  /**
   * Narrows a query over `transactions` to the rows whose folded texts contain every given needle
   * (name, description, category: AND), and names the expression that orders the narrowed rows by
   * creation (`transactions.seq`, or an equal column that the index returns in order) at least cost.
   */
  whereTransactionTextsContain(
    query: TransactionsQuery,
    filters: readonly TextContains[],
  ): { query: TransactionsQuery; creationOrder: Expression<number> };
  /** True when `error` is the database refusing a duplicate key (unique or primary key). */
  isUniqueViolation(error: unknown): boolean;
  /**
   * A value that changes whenever the data may have changed, by this process or another; read
   * caches start afresh when it moves. Undefined when this handle cannot tell (then do not cache).
   */
  changeStamp(db: Kysely<any>): string | undefined;
}
