// The documents of a pal version (PDF and image files with their fields, signatures and
// bookmarks, docs/pal-format.md): pal_documents holds what deployment read of each, and
// document_contents the bytes, once per SHA-256 within an enterprise, so that redeploying a pal
// does not copy its unchanged files.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const palDocuments: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('document_contents')
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('content', dialectOf(db).binaryType, (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('document_contents_pk', ['enterprise_id', 'digest'])
      .execute();

    await db.schema
      .createTable('pal_documents')
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('pal_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('file', 'text', (c) => c.notNull())
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('document', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('pal_documents_pk', ['enterprise_id', 'pal_id', 'version', 'file'])
      .addForeignKeyConstraint(
        'pal_documents_version',
        ['enterprise_id', 'pal_id', 'version'],
        'pal_versions',
        ['enterprise_id', 'pal_id', 'version'],
        (f) => f.onDelete('cascade'),
      )
      .addForeignKeyConstraint(
        'pal_documents_content',
        ['enterprise_id', 'digest'],
        'document_contents',
        ['enterprise_id', 'digest'],
      )
      .execute();
    await db.schema
      .createIndex('pal_documents_content')
      .on('pal_documents')
      .columns(['enterprise_id', 'digest'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('pal_documents').execute();
    await db.schema.dropTable('document_contents').execute();
  },
};
