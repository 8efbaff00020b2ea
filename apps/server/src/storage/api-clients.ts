// The api_clients table: BASIC credentials, unique by username across the service.
import type { Db } from './database.js';
import { rowWasInserted } from './inserted.js';
import type { ApiClientsTable } from './schema.js';

export type ApiClientRow = ApiClientsTable;

/** Inserts the client; false when its username is taken. */
export async function insertApiClient(db: Db, row: ApiClientRow): Promise<boolean> {
  const result = await db
    .insertInto('api_clients')
    .values(row)
    .onConflict((oc) => oc.column('username').doNothing())
    .executeTakeFirst();
  return rowWasInserted(result);
}

export function findApiClientByUsername(
  db: Db,
  username: string,
): Promise<ApiClientRow | undefined> {
  return db
    .selectFrom('api_clients')
    .selectAll()
    .where('username', '=', username)
    .executeTakeFirst();
}

export async function setApiClientSecretHash(
  db: Db,
  id: string,
  secretHash: string,
): Promise<void> {
  await db
    .updateTable('api_clients')
    .set({ secret_hash: secretHash })
    .where('id', '=', id)
    .execute();
}

export function listApiClientRows(
  db: Db,
  enterpriseId: string,
): Promise<Omit<ApiClientRow, 'secret_hash'>[]> {
  return db
    .selectFrom('api_clients')
    .select(['id', 'enterprise_id', 'username', 'created_at'])
    .where('enterprise_id', '=', enterpriseId)
    .orderBy('username')
    .execute();
}

/** Deletes the enterprise's client; its username, or undefined when there was none. */
export async function deleteApiClientRow(
  db: Db,
  enterpriseId: string,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .deleteFrom('api_clients')
    .where('id', '=', id)
    .where('enterprise_id', '=', enterpriseId)
    .returning('username')
    .executeTakeFirst();
  return row?.username;
}
