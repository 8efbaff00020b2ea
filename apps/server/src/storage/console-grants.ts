// The console_grants table (schema.ts: ConsoleGrantsTable): which SSO may use which console pal,
// under which profile (C3, C4).
import type { Db } from './database.js';
import { dialectOf } from './adapter-dialect.js';
import type { ConsoleProfile, IsoDate } from './schema.js';

/** One grant: the SSO may use the enterprise's console pal under the profile. */
export interface ConsoleGrantKey {
  enterpriseId: string;
  palId: string;
  ssoId: string;
  profile: ConsoleProfile;
}

/** Adds the grant; an existing one is kept as it is. True when it was added. */
export async function insertConsoleGrant(
  db: Db,
  grant: ConsoleGrantKey,
  now: IsoDate,
): Promise<boolean> {
  const result = await db
    .insertInto('console_grants')
    .values({
      enterprise_id: grant.enterpriseId,
      pal_id: grant.palId,
      sso_id: grant.ssoId,
      profile: grant.profile,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(['enterprise_id', 'pal_id', 'sso_id', 'profile']).doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** True when there was such a grant. */
export async function deleteConsoleGrant(db: Db, grant: ConsoleGrantKey): Promise<boolean> {
  const result = await db
    .deleteFrom('console_grants')
    .where('enterprise_id', '=', grant.enterpriseId)
    .where('pal_id', '=', grant.palId)
    .where('sso_id', '=', grant.ssoId)
    .where('profile', '=', grant.profile)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Whether the grant exists and its SSO is not DELETED (a deleted SSO's grants stay, unused). In a
 * transaction (C6 issuing its token; an entry starting its session, after redeeming its token)
 * the grant's row is locked until it ends, so that nothing removes the grant under a token or a
 * session being made. C4 takes the entry's order, the token, then the grant
 * (domain/console-access.ts): in the other the two deadlocked on PostgreSQL.
 */
export async function hasLiveConsoleGrant(db: Db, grant: ConsoleGrantKey): Promise<boolean> {
  const query = db
    .selectFrom('console_grants')
    .innerJoin('ssos', 'ssos.id', 'console_grants.sso_id')
    .select('console_grants.sso_id')
    .where('console_grants.enterprise_id', '=', grant.enterpriseId)
    .where('console_grants.pal_id', '=', grant.palId)
    .where('console_grants.sso_id', '=', grant.ssoId)
    .where('console_grants.profile', '=', grant.profile)
    .where('ssos.status', '<>', 'DELETED');
  // The grant's row alone: the SSO's is not this check's to hold.
  const locked = db.isTransaction
    ? dialectOf(db).forUpdate(query, { of: 'console_grants' })
    : query;
  const row = await locked.executeTakeFirst();
  return row !== undefined;
}
