// The browser_sessions table: sessions named by a hashed cookie value (domain/sessions.ts).
import { chosenRows } from './chosen-rows.js';
import type { Db } from './database.js';
import { type EveryColumn, preparedQuery } from './prepared-query.js';
import type { BrowserSessionsTable, ConsoleProfile } from './schema.js';

export type BrowserSessionRow = BrowserSessionsTable;

const insertQuery = preparedQuery((db, p: BrowserSessionRow) =>
  db.insertInto('browser_sessions').values({
    id_hash: p.id_hash,
    enterprise_id: p.enterprise_id,
    pal_id: p.pal_id,
    transaction_id: p.transaction_id,
    sso_id: p.sso_id,
    role: p.role,
    kind: p.kind,
    profile: p.profile,
    csrf: p.csrf,
    outcome: p.outcome,
    created_at: p.created_at,
    last_seen_at: p.last_seen_at,
  } satisfies EveryColumn<BrowserSessionsTable>),
);

export async function insertBrowserSession(db: Db, row: BrowserSessionRow): Promise<void> {
  await insertQuery.run(db, row);
}

/**
 * The session, its last_seen_at set to `now`, when it was seen after `liveSince` and started after
 * `startedAfter`; else undefined.
 */
export function touchBrowserSession(
  db: Db,
  idHash: string,
  now: string,
  liveSince: string,
  startedAfter: string,
): Promise<BrowserSessionRow | undefined> {
  return db
    .updateTable('browser_sessions')
    .set({ last_seen_at: now })
    .where('id_hash', '=', idHash)
    .where('last_seen_at', '>', liveSince)
    .where('created_at', '>', startedAfter)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Of the sessions named by `idHashes`, those still live (seen after `liveSince`, started after
 * `startedAfter`), with their CSRF tokens and when they were last seen; without touching them.
 */
export function liveBrowserSessions(
  db: Db,
  idHashes: readonly string[],
  liveSince: string,
  startedAfter: string,
): Promise<Pick<BrowserSessionRow, 'id_hash' | 'csrf' | 'last_seen_at'>[]> {
  if (idHashes.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('browser_sessions')
    .select(['id_hash', 'csrf', 'last_seen_at'])
    .where('id_hash', 'in', idHashes)
    .where('last_seen_at', '>', liveSince)
    .where('created_at', '>', startedAfter)
    .execute();
}

export async function deleteBrowserSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('browser_sessions').where('id_hash', '=', idHash).execute();
}

export async function setBrowserSessionOutcome(
  db: Db,
  idHash: string,
  outcome: string,
): Promise<void> {
  await db.updateTable('browser_sessions').set({ outcome }).where('id_hash', '=', idHash).execute();
}

/**
 * Removes at most `limit` sessions last seen at or before `seenBefore`, or started at or before
 * `startedBefore`; which (for their audit records).
 */
export function deleteEndedBrowserSessions(
  db: Db,
  seenBefore: string,
  startedBefore: string,
  limit: number,
): Promise<
  Pick<
    BrowserSessionRow,
    'id_hash' | 'enterprise_id' | 'pal_id' | 'transaction_id' | 'sso_id' | 'created_at'
  >[]
> {
  const ended = chosenRows(
    db,
    db
      .selectFrom('browser_sessions')
      .select('id_hash')
      .where((eb) =>
        eb.or([eb('last_seen_at', '<=', seenBefore), eb('created_at', '<=', startedBefore)]),
      ),
    limit,
  );
  return db
    .deleteFrom('browser_sessions')
    .where('id_hash', 'in', ended)
    .returning(['id_hash', 'enterprise_id', 'pal_id', 'transaction_id', 'sso_id', 'created_at'])
    .execute();
}

/**
 * Removes the sessions that `ssoId` started through mailed links to `transactionId`, all but the
 * one `started` now and the `keep` - 1 newest of the others; which (for their audit records).
 */
export async function deleteOlderMailSessions(
  db: Db,
  where: { enterpriseId: string; transactionId: string; ssoId: string; started: string },
  keep: number,
): Promise<
  Pick<BrowserSessionRow, 'id_hash' | 'enterprise_id' | 'pal_id' | 'transaction_id' | 'sso_id'>[]
> {
  // Read newest first and cut here: SQLite's OFFSET needs a LIMIT, and these are at most a few
  // more than `keep` (each start trims them). The session just started is kept whatever its
  // time says (a node whose clock is behind, or the same millisecond as another).
  const held = await db
    .selectFrom('browser_sessions')
    .select('id_hash')
    .where('kind', '=', 'mail')
    .where('transaction_id', '=', where.transactionId)
    .where('sso_id', '=', where.ssoId)
    .where('enterprise_id', '=', where.enterpriseId)
    .where('id_hash', '!=', where.started)
    .orderBy('created_at', 'desc')
    .orderBy('id_hash')
    .execute();
  const older = held.slice(keep - 1).map((row) => row.id_hash);
  if (older.length === 0) return [];
  return db
    .deleteFrom('browser_sessions')
    .where('id_hash', 'in', older)
    .returning(['id_hash', 'enterprise_id', 'pal_id', 'transaction_id', 'sso_id'])
    .execute();
}

/** The update that clears a grant's console sessions, found through browser_sessions_console_grant (0031). */
export function withdrawConsoleSessionsQuery(
  db: Db,
  grant: { enterpriseId: string; palId: string; ssoId: string; profile: ConsoleProfile },
) {
  return db
    .updateTable('browser_sessions')
    .set({ profile: null })
    .where('kind', '=', 'console')
    .where('sso_id', '=', grant.ssoId)
    .where('pal_id', '=', grant.palId)
    .where('enterprise_id', '=', grant.enterpriseId)
    .where('profile', '=', grant.profile);
}

/**
 * Takes the grant away from the console sessions that rest on it (C4): their profile is cleared,
 * so that each ends at its next request with the page that says why, even if the grant is given
 * again before then (a new grant does not revive them); how many.
 */
export async function withdrawConsoleSessions(
  db: Db,
  grant: { enterpriseId: string; palId: string; ssoId: string; profile: ConsoleProfile },
): Promise<number> {
  const result = await withdrawConsoleSessionsQuery(db, grant).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function countBrowserSessions(db: Db): Promise<number> {
  const row = await db
    .selectFrom('browser_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
