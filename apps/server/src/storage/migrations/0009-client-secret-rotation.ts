// Rotating an API client's secret (`pal client rotate`, domain/clients.ts): the secret it
// replaced keeps working until `previous_secret_expires_at`, so the client's instances can take
// the new one without an outage. Only the latest previous secret is kept.
import type { Kysely, Migration } from 'kysely';

export const clientSecretRotation: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('api_clients').addColumn('previous_secret_hash', 'text').execute();
    await db.schema
      .alterTable('api_clients')
      .addColumn('previous_secret_expires_at', 'text')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('api_clients').dropColumn('previous_secret_expires_at').execute();
    await db.schema.alterTable('api_clients').dropColumn('previous_secret_hash').execute();
  },
};
