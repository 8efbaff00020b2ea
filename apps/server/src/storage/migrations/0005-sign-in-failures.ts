// The failed sign-in throttle's counts (domain/sign-in-failures.ts), in the database so that the
// nodes on one database share them: guesses spread over several nodes add up.
import type { Kysely, Migration } from 'kysely';

export const signInFailures: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('sign_in_failures')
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('window_start', 'text', (c) => c.notNull())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('sign_in_failures_pk', ['username', 'address'])
      .execute();
    await db.schema
      .createIndex('sign_in_failures_window_start')
      .on('sign_in_failures')
      .column('window_start')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('sign_in_failures').execute();
  },
};
