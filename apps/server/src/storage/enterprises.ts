// The enterprises table: tenants, unique by case-folded name.
import type { Db } from './database.js';
import { rowWasInserted } from './inserted.js';
import type { EnterprisesTable } from './schema.js';

export type EnterpriseRow = Omit<EnterprisesTable, 'name_key'>;

const COLUMNS = ['id', 'name', 'created_at'] as const;

/** Inserts the enterprise; false when its name_key is taken. */
export async function insertEnterprise(db: Db, row: EnterprisesTable): Promise<boolean> {
  const result = await db
    .insertInto('enterprises')
    .values(row)
    .onConflict((oc) => oc.column('name_key').doNothing())
    .executeTakeFirst();
  return rowWasInserted(result);
}

export function findEnterpriseRowByNameKey(
  db: Db,
  nameKey: string,
): Promise<EnterpriseRow | undefined> {
  return db
    .selectFrom('enterprises')
    .select(COLUMNS)
    .where('name_key', '=', nameKey)
    .executeTakeFirst();
}

export function findEnterpriseRow(db: Db, id: string): Promise<EnterpriseRow | undefined> {
  return db.selectFrom('enterprises').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}
