// What a transaction's people gave its documents (docs/web-mode.md): field values and signatures,
// written only by a run that succeeded, in the commit of its other effects. A signature keeps the
// evidence the completed PDF's evidence page prints: the signer's name and e-mail as the SSO had
// them when signing, the address and user agent of the request, and the time.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const documentState: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('transaction_field_values')
      .addColumn('transaction_id', 'text', (c) =>
        c.notNull().references('transactions.id').onDelete('cascade'),
      )
      .addColumn('file', 'text', (c) => c.notNull())
      .addColumn('field_id', 'text', (c) => c.notNull())
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('transaction_field_values_pk', [
        'transaction_id',
        'file',
        'field_id',
      ])
      .execute();

    await db.schema
      .createTable('transaction_signatures')
      .addColumn('transaction_id', 'text', (c) =>
        c.notNull().references('transactions.id').onDelete('cascade'),
      )
      .addColumn('file', 'text', (c) => c.notNull())
      .addColumn('signature_id', 'text', (c) => c.notNull())
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      // Null for an anonymous session's signer.
      .addColumn('sso_id', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      // DRAWN: the PNG's bytes; TYPED: the name as typed.
      .addColumn('image', dialectOf(db).binaryType)
      .addColumn('text', 'text')
      .addColumn('record_time', 'integer', (c) => c.notNull())
      .addColumn('signer_name', 'text')
      .addColumn('signer_email', 'text')
      .addColumn('ip_address', 'text', (c) => c.notNull())
      .addColumn('user_agent', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('transaction_signatures_pk', [
        'transaction_id',
        'file',
        'signature_id',
      ])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('transaction_signatures').execute();
    await db.schema.dropTable('transaction_field_values').execute();
  },
};
