// The seam between portable storage code and what only one database accepts. Everything above
// this interface (migrations, repositories, searches) is written with Kysely's query builder in
// SQL that SQLite and PostgreSQL both run; each database's peculiarities (pragmas, the full-text
// index behind "name contains") live in one module per database: today ./sqlite.ts only.
import type { CreateTableBuilder, Expression, Kysely, SqlBool } from 'kysely';
import { PostgresAdapter } from 'kysely';
import { sqliteDialect } from './sqlite.js';

export interface StorageDialect {
  readonly name: 'sqlite' | 'postgres';
  /** Adds an auto-incrementing integer primary-key column to a table being created. */
  serialPrimaryKey<T extends string>(
    table: CreateTableBuilder<T, never>,
    column: string,
  ): CreateTableBuilder<T, never>;
  /** Creates (in a migration) the index that serves transaction-name "contains" searches. */
  createTransactionNameIndex(db: Kysely<unknown>): Promise<void>;
  dropTransactionNameIndex(db: Kysely<unknown>): Promise<void>;
  /**
   * The condition "the transaction's folded name contains `foldedNeedle`", over the
   * `transactions` table (not aliased) of the query it is used in.
   */
  transactionNameContains(foldedNeedle: string): Expression<SqlBool>;
  /** True when `error` is the database refusing a duplicate key (unique or primary key). */
  isUniqueViolation(error: unknown): boolean;
}

/** The dialect of a Kysely instance (or of a transaction of one). */
export function dialectOf(db: Kysely<any>): StorageDialect {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    throw new Error('PostgreSQL is not supported yet');
  }
  return sqliteDialect;
}
