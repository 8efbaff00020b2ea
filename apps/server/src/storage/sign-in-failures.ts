// The sign_in_failures table: failed sign-ins per (username, address) and window, shared by every
// node on the database (domain/sign-in-failures.ts).
import { sql } from 'kysely';
import { deleteChosenRows } from './chosen-rows.js';
import type { Db } from './database.js';
import type { IsoDate } from './schema.js';

/**
 * Counts one failure of (username, address) at `now`, in one statement, so that concurrent
 * failures on any number of nodes all count: the pair's window goes on when it began after
 * `windowOpenSince`, else a new one begins at `now` with this failure. A pair whose open window
 * already holds more than `limit` failures is throttled, and its row is left as it is: nothing is
 * written, and nothing is answered (undefined). Otherwise answers the window after this failure.
 */
export function recordSignInFailure(
  db: Db,
  username: string,
  address: string,
  now: IsoDate,
  windowOpenSince: IsoDate,
  limit: number,
): Promise<{ window_start: IsoDate; failures: number } | undefined> {
  const open = sql<boolean>`sign_in_failures.window_start > ${windowOpenSince}`;
  return db
    .insertInto('sign_in_failures')
    .values({ username, address, window_start: now, failures: 1 })
    .onConflict((oc) =>
      oc
        .columns(['username', 'address'])
        .doUpdateSet({
          // Both read the row as it was before this update (SQL's SET semantics, on both engines).
          failures: sql<number>`case when ${open} then sign_in_failures.failures + 1 else 1 end`,
          window_start: sql<IsoDate>`case when ${open} then sign_in_failures.window_start else excluded.window_start end`,
        })
        .where(sql<boolean>`not (${open} and sign_in_failures.failures > ${limit})`),
    )
    .returning(['window_start', 'failures'])
    .executeTakeFirst();
}

export function findSignInFailures(
  db: Db,
  username: string,
  address: string,
): Promise<{ window_start: IsoDate; failures: number } | undefined> {
  return db
    .selectFrom('sign_in_failures')
    .select(['window_start', 'failures'])
    .where('username', '=', username)
    .where('address', '=', address)
    .executeTakeFirst();
}

export async function deleteSignInFailures(
  db: Db,
  username: string,
  address: string,
): Promise<void> {
  await db
    .deleteFrom('sign_in_failures')
    .where('username', '=', username)
    .where('address', '=', address)
    .execute();
}

/** Removes at most `limit` windows that began at or before `before`; how many. */
export function deleteSignInFailuresBefore(
  db: Db,
  before: IsoDate,
  limit: number,
): Promise<number> {
  const key = ['username', 'address'] as const;
  const ended = db.selectFrom('sign_in_failures').select(key).where('window_start', '<=', before);
  return deleteChosenRows(db, 'sign_in_failures', key, ended, limit);
}
