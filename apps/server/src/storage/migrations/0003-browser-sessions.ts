// Browser sessions (docs/entry.md): made when a person enters a pal or a transaction with a token;
// the cookie's value is random and only its hash is stored. A session ends after 30 minutes idle.
import type { Kysely, Migration } from 'kysely';

export const browserSessions: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('browser_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('pal_id', 'text', (c) => c.notNull())
      .addColumn('transaction_id', 'text')
      .addColumn('sso_id', 'text')
      .addColumn('role', 'text')
      .addColumn('csrf', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('browser_sessions_last_seen')
      .on('browser_sessions')
      .column('last_seen_at')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('browser_sessions').execute();
  },
};
