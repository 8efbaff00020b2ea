// The invitations table (schema.ts: InvitationsTable): E3's single-use links, found by the hash of
// their token. A token is spent by one conditional UPDATE, so that of concurrent confirmations
// exactly one wins.
import { sql } from 'kysely';
import type { Db } from './database.js';
import type { IsoDate, SsoStatus } from './schema.js';

/** An invitation as the confirm page needs it, with what decides whether it is still usable. */
export interface InvitationState {
  enterpriseName: string;
  email: string;
  firstName: string;
  lastName: string;
  expiresAt: IsoDate;
  usedAt: IsoDate | null;
  ssoStatus: SsoStatus;
}

/** What a consumed invitation invited to. */
export interface InvitedTo {
  ssoId: string;
  enterpriseId: string;
  enterpriseName: string;
  email: string;
}

export async function insertInvitation(
  db: Db,
  invitation: {
    id: string;
    tokenHash: string;
    enterpriseId: string;
    ssoId: string;
    email: string;
    createdAt: IsoDate;
    expiresAt: IsoDate;
  },
): Promise<void> {
  await db
    .insertInto('invitations')
    .values({
      id: invitation.id,
      token_hash: invitation.tokenHash,
      enterprise_id: invitation.enterpriseId,
      sso_id: invitation.ssoId,
      email: invitation.email,
      created_at: invitation.createdAt,
      expires_at: invitation.expiresAt,
      used_at: null,
    })
    .execute();
}

/** When the SSO's latest invitation was made (and mailed), or undefined when it has none. */
export async function lastInvitationAt(db: Db, ssoId: string): Promise<IsoDate | undefined> {
  const row = await db
    .selectFrom('invitations')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('sso_id', '=', ssoId)
    .executeTakeFirst();
  return row?.at ?? undefined;
}

/** The invitation with its enterprise, account and SSO status, whatever its state. */
export async function findInvitationByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<InvitationState | undefined> {
  return db
    .selectFrom('invitations')
    .innerJoin('ssos', 'ssos.id', 'invitations.sso_id')
    .innerJoin('accounts', 'accounts.id', 'ssos.account_id')
    .innerJoin('enterprises', 'enterprises.id', 'invitations.enterprise_id')
    .select([
      'enterprises.name as enterpriseName',
      'accounts.email',
      'accounts.first_name as firstName',
      'accounts.last_name as lastName',
      'invitations.expires_at as expiresAt',
      'invitations.used_at as usedAt',
      'ssos.status as ssoStatus',
    ])
    .where('invitations.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/**
 * Marks the invitation used if it is unused, unexpired at `now` and its SSO still pending, and
 * then returns what it invited to; undefined when it was not usable (or not found).
 */
export async function consumeInvitation(
  db: Db,
  tokenHash: string,
  now: IsoDate,
): Promise<InvitedTo | undefined> {
  const consumed = await db
    .updateTable('invitations')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('ssos')
          .select(sql.lit(1).as('one'))
          .whereRef('ssos.id', '=', 'invitations.sso_id')
          .where('ssos.status', '=', 'PENDING_ACTIVATION'),
      ),
    )
    .executeTakeFirst();
  if (consumed.numUpdatedRows !== 1n) return undefined;
  return db
    .selectFrom('invitations')
    .innerJoin('enterprises', 'enterprises.id', 'invitations.enterprise_id')
    .select([
      'invitations.sso_id as ssoId',
      'invitations.enterprise_id as enterpriseId',
      'enterprises.name as enterpriseName',
      'invitations.email',
    ])
    .where('invitations.token_hash', '=', tokenHash)
    .executeTakeFirstOrThrow();
}
