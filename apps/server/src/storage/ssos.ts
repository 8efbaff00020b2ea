// The accounts and ssos tables (schema.ts: AccountsTable, SsosTable): one account per e-mail
// address across the service, and the SSOs that tie an account to an enterprise. Reads are scoped
// by enterprise, so that another enterprise's SSO reads as missing.
import type { Selectable } from 'kysely';
import type { Db } from './database.js';
import { dialectOf } from './adapter-dialect.js';
import type { AccountsTable, IsoDate, SsoStatus } from './schema.js';
import { rowWasInserted } from './inserted.js';
import { preparedQuery } from './prepared-query.js';

export type AccountRow = Selectable<AccountsTable>;

/** An SSO with the account behind it. */
export interface SsoRecord {
  id: string;
  enterpriseId: string;
  status: SsoStatus;
  accountId: string;
  email: string;
  firstName: string;
  lastName: string;
  createdAt: IsoDate;
  updatedAt: IsoDate;
}

/** The account fields a person gives (E1, E6); `emailKey` is the folded address. */
export interface AccountFields {
  email: string;
  emailKey: string;
  firstName: string;
  lastName: string;
}

const ssoQuery = preparedQuery((db, p: { ssoId: string; enterpriseId: string }) =>
  db
    .selectFrom('ssos')
    .innerJoin('accounts', 'accounts.id', 'ssos.account_id')
    .select([
      'ssos.id',
      'ssos.enterprise_id as enterpriseId',
      'ssos.status',
      'ssos.account_id as accountId',
      'accounts.email',
      'accounts.first_name as firstName',
      'accounts.last_name as lastName',
      'ssos.created_at as createdAt',
      'ssos.updated_at as updatedAt',
    ])
    .where('ssos.id', '=', p.ssoId)
    .where('ssos.enterprise_id', '=', p.enterpriseId),
);

export async function findSso(
  db: Db,
  enterpriseId: string,
  ssoId: string,
): Promise<SsoRecord | undefined> {
  return ssoQuery.executeTakeFirst(db, { ssoId, enterpriseId });
}

/** The enterprise's SSO of the account that is not DELETED (there is at most one). */
export async function findLiveSsoOfAccount(
  db: Db,
  enterpriseId: string,
  accountId: string,
): Promise<{ id: string; status: SsoStatus } | undefined> {
  return db
    .selectFrom('ssos')
    .select(['id', 'status'])
    .where('enterprise_id', '=', enterpriseId)
    .where('account_id', '=', accountId)
    .where('status', '<>', 'DELETED')
    .executeTakeFirst();
}

export async function insertSso(
  db: Db,
  sso: { id: string; enterpriseId: string; accountId: string; status: SsoStatus; now: IsoDate },
): Promise<void> {
  await db
    .insertInto('ssos')
    .values({
      id: sso.id,
      enterprise_id: sso.enterpriseId,
      account_id: sso.accountId,
      status: sso.status,
      created_at: sso.now,
      updated_at: sso.now,
    })
    .execute();
}

/** DELETED is final: a deleted SSO is left as it is. True when this call deleted it. */
export async function markSsoDeleted(
  db: Db,
  enterpriseId: string,
  ssoId: string,
  now: IsoDate,
): Promise<boolean> {
  const result = await db
    .updateTable('ssos')
    .set({ status: 'DELETED', updated_at: now })
    .where('id', '=', ssoId)
    .where('enterprise_id', '=', enterpriseId)
    .where('status', '<>', 'DELETED')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** PENDING_ACTIVATION → ACTIVE; an SSO in any other status is left as it is. */
export async function activatePendingSso(db: Db, ssoId: string, now: IsoDate): Promise<void> {
  await db
    .updateTable('ssos')
    .set({ status: 'ACTIVE', updated_at: now })
    .where('id', '=', ssoId)
    .where('status', '=', 'PENDING_ACTIVATION')
    .execute();
}

/**
 * Takes the account's row lock until the database transaction ends and returns the account as
 * committed now; undefined when there is no such account or (with `emailKey`) it no longer has
 * that address. E3 takes it before it adds an SSO, E6 before it checks who else holds one and
 * rewrites the account: so on any number of nodes, the two are one after the other. A no-op
 * UPDATE rather than SELECT … FOR UPDATE, which SQLite does not know: PostgreSQL makes a second
 * writer of the row wait for the first to end, SQLite has one writer at a time anyway.
 */
export async function lockAccount(
  db: Db,
  accountId: string,
  emailKey?: string,
): Promise<AccountRow | undefined> {
  let update = db
    .updateTable('accounts')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', accountId);
  if (emailKey !== undefined) update = update.where('email_key', '=', emailKey);
  return update.returningAll().executeTakeFirst();
}

/**
 * Whether an enterprise other than `enterpriseId` holds an SSO of the account that is not
 * DELETED (ACTIVE, or PENDING_ACTIVATION: an invitee may still accept).
 */
export async function isAccountHeldElsewhere(
  db: Db,
  accountId: string,
  enterpriseId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('ssos')
    .select('id')
    .where('account_id', '=', accountId)
    .where('enterprise_id', '<>', enterpriseId)
    .where('status', '<>', 'DELETED')
    .executeTakeFirst();
  return row !== undefined;
}

export async function findAccountByEmailKey(
  db: Db,
  emailKey: string,
): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('email_key', '=', emailKey).executeTakeFirst();
}

/** False, and nothing written, when an account already has this address. */
export async function insertAccount(
  db: Db,
  account: AccountFields & { id: string; now: IsoDate },
): Promise<boolean> {
  const inserted = await db
    .insertInto('accounts')
    .values({
      id: account.id,
      email: account.email,
      email_key: account.emailKey,
      first_name: account.firstName,
      last_name: account.lastName,
      created_at: account.now,
      updated_at: account.now,
    })
    .onConflict((oc) => oc.column('email_key').doNothing())
    .executeTakeFirst();
  return rowWasInserted(inserted);
}

/** False, and nothing written, when another account has the new address. */
export async function updateAccount(
  db: Db,
  accountId: string,
  fields: AccountFields & { now: IsoDate },
): Promise<boolean> {
  try {
    await db
      .updateTable('accounts')
      .set({
        first_name: fields.firstName,
        last_name: fields.lastName,
        email: fields.email,
        email_key: fields.emailKey,
        updated_at: fields.now,
      })
      .where('id', '=', accountId)
      .execute();
    return true;
  } catch (error) {
    if (dialectOf(db).isUniqueViolation(error)) return false;
    throw error;
  }
}
