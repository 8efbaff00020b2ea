// The api_clients table: BASIC credentials, unique by username across the service.
import type { Db } from './database.js';
import { rowWasInserted } from './inserted.js';
import type { ApiClientsTable, IsoDate } from './schema.js';

export type ApiClientRow = ApiClientsTable;
/** A new client: it has no previous secret. */
export type NewApiClientRow = Omit<
  ApiClientRow,
  'previous_secret_hash' | 'previous_secret_expires_at'
>;

/** Inserts the client; false when its username is taken. */
export async function insertApiClient(db: Db, row: NewApiClientRow): Promise<boolean> {
  const result = await db
    .insertInto('api_clients')
    .values({ ...row, previous_secret_hash: null, previous_secret_expires_at: null })
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

/** Gives the client this secret, and only this one (a previous one stops). */
export async function setApiClientSecretHash(
  db: Db,
  id: string,
  secretHash: string,
): Promise<void> {
  await db
    .updateTable('api_clients')
    .set({ secret_hash: secretHash, previous_secret_hash: null, previous_secret_expires_at: null })
    .where('id', '=', id)
    .execute();
}

/**
 * Gives the enterprise's client a new secret; the one it had stays valid until
 * `previousExpiresAt` (null: it stops now), in place of any older one. One statement, so two
 * rotations at once cannot lose a secret in between. Undefined when there is no such client.
 */
export async function rotateApiClientSecret(
  db: Db,
  enterpriseId: string,
  username: string,
  secretHash: string,
  previousExpiresAt: IsoDate | null,
): Promise<{ id: string } | undefined> {
  return db
    .updateTable('api_clients')
    .set((eb) => ({
      secret_hash: secretHash,
      previous_secret_hash: previousExpiresAt === null ? null : eb.ref('secret_hash'),
      previous_secret_expires_at: previousExpiresAt,
    }))
    .where('enterprise_id', '=', enterpriseId)
    .where('username', '=', username)
    .returning('id')
    .executeTakeFirst();
}

export function listApiClientRows(
  db: Db,
  enterpriseId: string,
): Promise<Pick<ApiClientRow, 'id' | 'enterprise_id' | 'username' | 'created_at'>[]> {
  return db
    .selectFrom('api_clients')
    .select(['id', 'enterprise_id', 'username', 'created_at'])
    .where('enterprise_id', '=', enterpriseId)
    .orderBy('username')
    .execute();
}

/**
 * Deletes the enterprise's client named by its id or its username; its username, or undefined
 * when there was none.
 */
export async function deleteApiClientRow(
  db: Db,
  enterpriseId: string,
  client: { id: string } | { username: string },
): Promise<string | undefined> {
  const [column, value] =
    'id' in client ? (['id', client.id] as const) : (['username', client.username] as const);
  const row = await db
    .deleteFrom('api_clients')
    .where('enterprise_id', '=', enterpriseId)
    .where(column, '=', value)
    .returning('username')
    .executeTakeFirst();
  return row?.username;
}
