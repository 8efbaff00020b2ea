// The completed PDFs of transactions (docs/web-mode.md, "Completed documents"): written once per
// PDF document after the transaction became COMPLETED, by the completion job of the outbox; their
// SHA-256 is the document's digest from then on.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const completedDocuments: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('transaction_completed_documents')
      .addColumn('transaction_id', 'text', (c) =>
        c.notNull().references('transactions.id').onDelete('cascade'),
      )
      .addColumn('file', 'text', (c) => c.notNull())
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      // SHA-256 of `content`, base64.
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('content', dialectOf(db).binaryType, (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('transaction_completed_documents_pk', ['transaction_id', 'file'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('transaction_completed_documents').execute();
  },
};
