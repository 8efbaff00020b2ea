// Files people uploaded on a transaction's session page (docs/pal-format.md, "uploads"): one per
// upload name, the latest kept, written only by a run that succeeded, in the commit of its effects.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const transactionUploads: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('transaction_uploads')
      .addColumn('transaction_id', 'text', (c) =>
        c.notNull().references('transactions.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      // SHA-256 of the content, base64.
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('content', dialectOf(db).binaryType, (c) => c.notNull())
      .addColumn('sso_id', 'text')
      .addColumn('uploaded_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('transaction_uploads_pk', ['transaction_id', 'name'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('transaction_uploads').execute();
  },
};
