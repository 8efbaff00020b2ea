// The tokens table: single-use entry tokens, stored only as a hash (domain/tokens.ts).
import { deleteChosenRows } from './chosen-rows.js';
import type { Db } from './database.js';
import { dialectOf } from './adapter-dialect.js';
import { type EveryColumn, preparedQuery } from './prepared-query.js';
import type { TokensTable } from './schema.js';

export type TokenRow = TokensTable;

const insertQuery = preparedQuery((db, p: TokenRow) =>
  db.insertInto('tokens').values({
    token_hash: p.token_hash,
    kind: p.kind,
    enterprise_id: p.enterprise_id,
    pal_id: p.pal_id,
    transaction_id: p.transaction_id,
    sso_id: p.sso_id,
    action: p.action,
    data: p.data,
    created_at: p.created_at,
    expires_at: p.expires_at,
    used_at: p.used_at,
  } satisfies EveryColumn<TokensTable>),
);

export async function insertToken(db: Db, row: TokenRow): Promise<void> {
  await insertQuery.run(db, row);
}

/**
 * Marks the token used, only while it is unused and unexpired: one conditional UPDATE, so of
 * concurrent redeemers exactly one gets the row.
 */
const consumeQuery = preparedQuery((db, p: { tokenHash: string; now: string }) =>
  db
    .updateTable('tokens')
    .set({ used_at: p.now })
    .where('token_hash', '=', p.tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', p.now)
    .returningAll(),
);

export function consumeToken(
  db: Db,
  tokenHash: string,
  now: string,
): Promise<TokenRow | undefined> {
  return consumeQuery.executeTakeFirst(db, { tokenHash, now });
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

/** The unused C6 tokens of an SSO for a console pal, found through tokens_console_grant (0031). */
export function unusedConsoleTokensQuery(
  db: Db,
  where: { enterpriseId: string; palId: string; ssoId: string },
) {
  return db
    .selectFrom('tokens')
    .select(['token_hash', 'data'])
    .where('kind', '=', 'console')
    .where('sso_id', '=', where.ssoId)
    .where('pal_id', '=', where.palId)
    .where('enterprise_id', '=', where.enterpriseId)
    .where('used_at', 'is', null);
}

/**
 * Removes the unused C6 tokens of an SSO for a console pal under `profile` (C4 withdrew the grant
 * they rest on); how many. `noWait` fails at once (isLockNotAvailable) on a token another
 * transaction holds, where waiting could deadlock with an entry that holds it and waits for the
 * grant (PostgreSQL).
 */
export async function deleteUnusedConsoleTokens(
  db: Db,
  where: { enterpriseId: string; palId: string; ssoId: string; profile: string },
  options: { noWait?: boolean } = {},
): Promise<number> {
  // The profile is in the token's data (domain/tokens.ts): read the SSO's few live ones.
  const query = unusedConsoleTokensQuery(db, where);
  const rows = await (
    options.noWait ? dialectOf(db).forUpdate(query, { noWait: true }) : query
  ).execute();
  const withdrawn = rows
    .filter(
      (row) =>
        row.data !== null &&
        (JSON.parse(row.data) as { profile?: string }).profile === where.profile,
    )
    .map((row) => row.token_hash);
  if (withdrawn.length === 0) return 0;
  const result = await db
    .deleteFrom('tokens')
    .where('token_hash', 'in', withdrawn)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The kinds of token whose entry gives a role on an existing transaction (T5, T8). */
const ROLE_TOKEN_KINDS = ['participant', 'anonymous'];

/**
 * The unused T5 and T8 tokens of an SSO, on one transaction or (null) every transaction of the
 * enterprise, found through tokens_transaction_sso (0032).
 */
export function unusedTransactionTokensQuery(
  db: Db,
  where: { enterpriseId: string; ssoId: string; transactionId: string | null },
) {
  let query = db
    .deleteFrom('tokens')
    // The index's own term (0032), so that SQLite uses it when no transaction is named.
    .where('transaction_id', 'is not', null)
    .where('kind', 'in', ROLE_TOKEN_KINDS)
    .where('sso_id', '=', where.ssoId)
    .where('enterprise_id', '=', where.enterpriseId)
    .where('used_at', 'is', null);
  if (where.transactionId !== null) query = query.where('transaction_id', '=', where.transactionId);
  return query;
}

/**
 * Removes the unused T5 and T8 tokens of an SSO whose roles T7 or T4 removes (their entry would
 * give a role again); how many. On PostgreSQL a token an entry is redeeming is waited for, and
 * left when that entry used it: its role is then there for T7 and T4 to remove.
 */
export async function deleteUnusedTransactionTokens(
  db: Db,
  where: { enterpriseId: string; ssoId: string; transactionId: string | null },
): Promise<number> {
  const result = await unusedTransactionTokensQuery(db, where).executeTakeFirst();
  return Number(result.numDeletedRows);
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
