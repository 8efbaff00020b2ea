// Idempotency keys (docs/events.md): per API client and key, the request's
// fingerprint, who is serving it and until when, and then its answer; kept 24 hours. The primary
// key is what lets exactly one of any number of concurrent requests, on any node, claim a key.
import type { Kysely, Migration } from 'kysely';

export const idempotencyKeys: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('locked_until', 'text', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('content_type', 'text')
      .addColumn('body', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['client_id', 'idempotency_key'])
      .execute();
    await db.schema
      .createIndex('idempotency_keys_expires_at')
      .on('idempotency_keys')
      .column('expires_at')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('idempotency_keys').execute();
  },
};
