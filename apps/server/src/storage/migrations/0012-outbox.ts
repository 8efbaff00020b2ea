// The outbox (docs/events.md): every outgoing message, a mail or a webhook delivery, is a row
// written in the same database transaction as the change that causes it, and delivered after
// commit by the dispatcher of any node (outbox/dispatcher.ts). The enterprises' webhook
// endpoints, whose deliveries are removed with them.
import type { Kysely, Migration } from 'kysely';

export const outbox: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('events', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_secret_until', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('webhook_endpoints_enterprise')
      .on('webhook_endpoints')
      .column('enterprise_id')
      .execute();

    await db.schema
      .createTable('outbox_messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('enterprise_id', 'text', (c) => c.references('enterprises.id').onDelete('cascade'))
      .addColumn('endpoint_id', 'text', (c) =>
        c.references('webhook_endpoints.id').onDelete('cascade'),
      )
      .addColumn('event_type', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('claim', 'text')
      .addColumn('last_error', 'text')
      .addColumn('retries_since', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    // The dispatcher's claim: pending messages in order of their due time.
    await db.schema
      .createIndex('outbox_messages_due')
      .on('outbox_messages')
      .columns(['status', 'next_attempt_at'])
      .execute();
    await db.schema
      .createIndex('outbox_messages_endpoint')
      .on('outbox_messages')
      .columns(['endpoint_id', 'created_at'])
      .execute();
    await db.schema
      .createIndex('outbox_messages_finished')
      .on('outbox_messages')
      .column('finished_at')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('outbox_messages').execute();
    await db.schema.dropTable('webhook_endpoints').execute();
  },
};
