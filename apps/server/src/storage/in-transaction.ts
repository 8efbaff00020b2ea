// Runs work in a database transaction: the given one when `db` is already a transaction (Kysely
// refuses to nest them), else a new one. For an act and its audit record to commit together.
import type { Db } from './database.js';

export function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}
