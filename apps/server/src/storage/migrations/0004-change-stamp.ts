// The change stamp (storage/storage-dialect.ts `changeStamp`): one row whose value moves, in the same
// transaction, with every write to a table that read caches hold (pals and what authenticates a
// client), so each server node on a shared PostgreSQL knows when its caches are stale. SQLite
// keeps the row too (one schema on both engines) but needs no triggers: `pragma data_version`
// tells it of other connections' commits.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const CACHED_TABLES = ['enterprises', 'api_clients', 'pals', 'pal_versions'] as const;

export const changeStamp: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('change_stamp')
      .addColumn('id', 'integer', (c) => c.primaryKey().notNull())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .execute();
    await db.insertInto('change_stamp').values({ id: 1, value: 0 }).execute();
    await dialectOf(db).createChangeStampTriggers(db, CACHED_TABLES);
  },
  async down(db: Kysely<any>) {
    await dialectOf(db).dropChangeStampTriggers(db, CACHED_TABLES);
    await db.schema.dropTable('change_stamp').execute();
  },
};
