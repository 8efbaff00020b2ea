// The outbox's lanes (outbox/dispatcher.ts): a node serves mails, completion jobs and each webhook
// endpoint with slots of their own, and claims a lane's due messages through this index: the
// lane's kind and endpoint, then its messages in order of their due time. It also takes the
// dispatcher from one endpoint with pending webhooks to the next without reading the messages
// between (storage/outbox-messages.ts: laneHeads). Mails and completion jobs, which have no
// endpoint, get an index of their own: PostgreSQL reads an index in order past an equality only,
// and `endpoint_id is null` is none, so their claims would sort every due one. Each index holds
// only its own messages, so a message is written to one of them.
import { sql, type Kysely, type Migration } from 'kysely';

export const outboxLanes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('outbox_messages_lane')
      .on('outbox_messages')
      .columns(['status', 'kind', 'endpoint_id', 'next_attempt_at'])
      .where(sql.ref('endpoint_id'), 'is not', null)
      .execute();
    await db.schema
      .createIndex('outbox_messages_kind_due')
      .on('outbox_messages')
      .columns(['status', 'kind', 'next_attempt_at'])
      .where(sql.ref('endpoint_id'), 'is', null)
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('outbox_messages_kind_due').ifExists().execute();
    await db.schema.dropIndex('outbox_messages_lane').ifExists().execute();
  },
};
