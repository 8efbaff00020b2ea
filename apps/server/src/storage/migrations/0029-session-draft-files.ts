// Files a person chose in a session form that did not go through (a field the workflow refused, a
// signature missing): kept with the session so that the next submission of the same page sends
// them again without the person choosing them anew. One per upload name, the latest, and only of
// the person's last session on the transaction; gone with the session (cascade), and when a run
// of the session succeeds.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const sessionDraftFiles: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('session_draft_files')
      .addColumn('session_id_hash', 'text', (c) =>
        c.notNull().references('browser_sessions.id_hash').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('content', dialectOf(db).binaryType, (c) => c.notNull())
      .addColumn('saved_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('session_draft_files_pk', ['session_id_hash', 'name'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('session_draft_files').execute();
  },
};
