// The workflow mails each enterprise sent in the current clock hour (its quota,
// WORKFLOW_MAILS_PER_HOUR), in the database so that every node on it counts the same mails.
import type { Kysely, Migration } from 'kysely';

export const workflowMailCounts: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('workflow_mail_counts')
      .addColumn('enterprise_id', 'text', (c) =>
        c.primaryKey().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('hour_start', 'text', (c) => c.notNull())
      .addColumn('sent', 'integer', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('workflow_mail_counts').execute();
  },
};
