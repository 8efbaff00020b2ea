// The tokens table: single-use entry tokens, stored only as a hash (domain/tokens.ts).
import { deleteChosenRows } from './chosen-rows.js';
import type { Db } from './database.js';
import type { TokensTable } from './schema.js';

export type TokenRow = TokensTable;

export async function insertToken(db: Db, row: TokenRow): Promise<void> {
  await db.insertInto('tokens').values(row).execute();
}

/**
 * Marks the token used, only while it is unused and unexpired: one conditional UPDATE, so of
 * concurrent redeemers exactly one gets the row.
 */
export function consumeToken(
  db: Db,
  tokenHash: string,
  now: string,
): Promise<TokenRow | undefined> {
  return db
    .updateTable('tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/**
 * The tokens that can no longer be redeemed at `now`: expired, or used by then. "Used by now"
 * rather than "used at all": a range, which SQLite's planner serves from the partial index
 * tokens_used beside tokens_expires (an OR with `is not null` it served by reading the whole
 * table); migration 0027. A token used after `now` (during the sweep's round, or on a node whose
 * clock is ahead) is left for a later round; it can be redeemed no more meanwhile.
 */
export function spentTokensQuery(db: Db, now: string) {
  return db
    .selectFrom('tokens')
    .select('token_hash')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('used_at', '<=', now)]));
}

/** Removes at most `limit` tokens that are used or expired at `now`; how many. */
export function deleteSpentTokens(db: Db, now: string, limit: number): Promise<number> {
  return deleteChosenRows(db, 'tokens', ['token_hash'], spentTokensQuery(db, now), limit);
}

export async function countTokens(db: Db): Promise<number> {
  const row = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The token with this hash, used or not (the audit of refused tokens reads it). */
export function findTokenByHash(db: Db, tokenHash: string): Promise<TokenRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}
