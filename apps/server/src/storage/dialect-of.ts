// Which StorageDialect a Kysely handle speaks, told from its adapter.
import { PostgresAdapter, type Kysely } from 'kysely';
import type { StorageDialect } from './dialect.js';
import { sqliteDialect } from './sqlite.js';

/** The dialect of a Kysely instance (or of a transaction of one). */
export function dialectOf(db: Kysely<any>): StorageDialect {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    throw new Error('PostgreSQL is not supported yet');
  }
  return sqliteDialect;
}
