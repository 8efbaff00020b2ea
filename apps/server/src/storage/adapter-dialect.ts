// Which StorageDialect a Kysely handle speaks, told from its adapter.
import { PostgresAdapter, type Kysely } from 'kysely';
import type { StorageDialect } from './storage-dialect.js';
import { postgresDialect } from './postgres.js';
import { sqliteDialect } from './sqlite.js';

/** The dialect of a Kysely instance (or of a transaction of one). */
export function dialectOf(db: Kysely<any>): StorageDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgresDialect : sqliteDialect;
}
