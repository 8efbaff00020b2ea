// The browser_sessions table: sessions named by a hashed cookie value (domain/sessions.ts).
import type { Db } from './database.js';
import type { BrowserSessionsTable } from './schema.js';

export type BrowserSessionRow = BrowserSessionsTable;

export async function insertBrowserSession(db: Db, row: BrowserSessionRow): Promise<void> {
  await db.insertInto('browser_sessions').values(row).execute();
}

/** The session, its last_seen_at set to `now`, when it was seen after `liveSince`; else undefined. */
export function touchBrowserSession(
  db: Db,
  idHash: string,
  now: string,
  liveSince: string,
): Promise<BrowserSessionRow | undefined> {
  return db
    .updateTable('browser_sessions')
    .set({ last_seen_at: now })
    .where('id_hash', '=', idHash)
    .where('last_seen_at', '>', liveSince)
    .returningAll()
    .executeTakeFirst();
}

export async function setBrowserSessionOutcome(
  db: Db,
  idHash: string,
  outcome: string,
): Promise<void> {
  await db.updateTable('browser_sessions').set({ outcome }).where('id_hash', '=', idHash).execute();
}

/** Removes sessions last seen at or before `before`; which (for their audit records). */
export function deleteBrowserSessionsSeenBefore(
  db: Db,
  before: string,
): Promise<
  Pick<BrowserSessionRow, 'id_hash' | 'enterprise_id' | 'pal_id' | 'transaction_id' | 'sso_id'>[]
> {
  return db
    .deleteFrom('browser_sessions')
    .where('last_seen_at', '<=', before)
    .returning(['id_hash', 'enterprise_id', 'pal_id', 'transaction_id', 'sso_id'])
    .execute();
}

export async function countBrowserSessions(db: Db): Promise<number> {
  const row = await db
    .selectFrom('browser_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
