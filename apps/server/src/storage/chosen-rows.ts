// Rows chosen for a statement that then names them by their key: the outbox's claim, and each
// batch of a sweep (domain/sweep-batches.ts). At most `limit` rows of `query`. On PostgreSQL each
// is locked as it is chosen, and one another transaction holds is skipped: another node takes it,
// or the next round does. When a chosen row was changed meanwhile, the lock tests `query`'s
// conditions again on the row as changed, and holds until the transaction ends; on SQLite the
// statement runs whole under the write lock. So the statement that names the keys needs no second
// test of those conditions, and must not have one: beside the keys, it made SQLite's planner walk
// the conditions' index instead, every matching row once per statement (docs/decisions.md).
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { dialectOf } from './adapter-dialect.js';

/** A table's key columns, as a query selects them. */
type Key = readonly [string, ...string[]];

export function chosenRows<Q extends SelectQueryBuilder<any, any, any>>(
  db: Kysely<any>,
  query: Q,
  limit: number,
): Q {
  return dialectOf(db).forUpdate(query.limit(limit) as Q, { skipLocked: true });
}

/**
 * Deletes at most `limit` rows of `query` from `table`, named by their key (`query` selects
 * exactly `key`); how many. Each batch of a sweep (domain/sweep-batches.ts).
 */
export async function deleteChosenRows(
  db: Kysely<any>,
  table: string,
  key: Key,
  query: SelectQueryBuilder<any, any, any>,
  limit: number,
): Promise<number> {
  const columns = sql.join(key.map((column) => sql.ref(column)));
  const result = await db
    .deleteFrom(table)
    .where(sql<boolean>`(${columns}) in (${chosenRows(db, query, limit)})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
