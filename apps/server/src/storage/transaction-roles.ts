// The transaction_roles table (schema.ts: TransactionRolesTable): the roles SSOs hold on
// transactions (participant, owner, a workflow's own, …).
import type { Db } from './database.js';
import { type EveryColumn, preparedQuery } from './prepared-query.js';
import type { IsoDate, TransactionRolesTable } from './schema.js';

/**
 * Whether the enterprise has the transaction. Roles need only that, not the row that
 * domain/transactions.ts loads (whose 400 names the parameter `id`, where role callers name it
 * `transactionId`).
 */
export async function transactionExists(
  db: Db,
  enterpriseId: string,
  transactionId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('transactions')
    .select('id')
    .where('id', '=', transactionId)
    .where('enterprise_id', '=', enterpriseId)
    .executeTakeFirst();
  return row !== undefined;
}

/** True when the role is new, false when the SSO held it already. */
export async function insertTransactionRole(
  db: Db,
  role: { enterpriseId: string; transactionId: string; ssoId: string; role: string },
  now: IsoDate,
): Promise<boolean> {
  return (await insertRoleQuery.changes(db, { ...role, now })) > 0;
}

const insertRoleQuery = preparedQuery(
  (
    db,
    p: { enterpriseId: string; transactionId: string; ssoId: string; role: string; now: IsoDate },
  ) =>
    db
      .insertInto('transaction_roles')
      .values({
        transaction_id: p.transactionId,
        sso_id: p.ssoId,
        role: p.role,
        enterprise_id: p.enterpriseId,
        created_at: p.now,
      } satisfies EveryColumn<TransactionRolesTable>)
      .onConflict((oc) => oc.columns(['transaction_id', 'sso_id', 'role']).doNothing()),
);

const rolesQuery = preparedQuery((db, p: { transactionId: string }) =>
  db
    .selectFrom('transaction_roles')
    .select(['sso_id', 'role'])
    .where('transaction_id', '=', p.transactionId)
    .orderBy('sso_id')
    .orderBy('role'),
);

const ssoRolesQuery = preparedQuery((db, p: { transactionId: string; ssoId: string }) =>
  db
    .selectFrom('transaction_roles')
    .select(['sso_id', 'role'])
    .where('transaction_id', '=', p.transactionId)
    .where('sso_id', '=', p.ssoId)
    .orderBy('sso_id')
    .orderBy('role'),
);

/** Ordered by SSO and role; only `ssoId`'s when given. */
export async function listTransactionRoles(
  db: Db,
  transactionId: string,
  ssoId?: string,
): Promise<{ ssoId: string; role: string }[]> {
  const rows =
    ssoId === undefined
      ? await rolesQuery.execute(db, { transactionId })
      : await ssoRolesQuery.execute(db, { transactionId, ssoId });
  return rows.map((r) => ({ ssoId: r.sso_id, role: r.role }));
}

/** Every role of the SSO on one transaction; how many there were. */
export async function deleteTransactionRoles(
  db: Db,
  transactionId: string,
  ssoId: string,
): Promise<number> {
  const result = await db
    .deleteFrom('transaction_roles')
    .where('transaction_id', '=', transactionId)
    .where('sso_id', '=', ssoId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Every role of the SSO on the enterprise's transactions; how many there were. */
export async function deleteEnterpriseRolesOfSso(
  db: Db,
  enterpriseId: string,
  ssoId: string,
): Promise<number> {
  const result = await db
    .deleteFrom('transaction_roles')
    .where('enterprise_id', '=', enterpriseId)
    .where('sso_id', '=', ssoId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
