// The webhook_endpoints table (schema.ts: WebhookEndpointsTable): an enterprise's endpoints,
// their subscribed event types and their sealed secrets. Removing one removes its deliveries.
import type { Selectable } from 'kysely';
import type { Db } from './database.js';
import { preparedQuery } from './prepared-query.js';
import type { IsoDate, WebhookEndpointsTable } from './schema.js';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;

export async function insertWebhookEndpoint(db: Db, row: WebhookEndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export async function findWebhookEndpoint(
  db: Db,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The enterprise's endpoints, oldest first. */
export async function listWebhookEndpoints(
  db: Db,
  enterpriseId: string,
): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('enterprise_id', '=', enterpriseId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The enterprise's endpoints with what fan-out needs (few per enterprise: see the domain). */
export async function listEndpointSubscriptions(
  db: Db,
  enterpriseId: string,
): Promise<{ id: string; events: string }[]> {
  return subscriptionsQuery.execute(db, { enterpriseId });
}

const subscriptionsQuery = preparedQuery((db, p: { enterpriseId: string }) =>
  db
    .selectFrom('webhook_endpoints')
    .select(['id', 'events'])
    .where('enterprise_id', '=', p.enterpriseId),
);

export async function countWebhookEndpoints(db: Db, enterpriseId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('enterprise_id', '=', enterpriseId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The enterprise's endpoint at this URL (as kept), if it has one. */
export async function findWebhookEndpointByUrl(
  db: Db,
  enterpriseId: string,
  url: string,
): Promise<{ id: string } | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('enterprise_id', '=', enterpriseId)
    .where('url', '=', url)
    .executeTakeFirst();
}

/** Removes the endpoint and, by cascade, its messages; false when there was none. */
export async function deleteWebhookEndpoint(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The new secret in place, the current one kept as previous until `previousUntil`. */
export async function rotateWebhookSecret(
  db: Db,
  id: string,
  secrets: { secret: string; previousSecret: string; previousUntil: IsoDate },
): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({
      secret: secrets.secret,
      previous_secret: secrets.previousSecret,
      previous_secret_until: secrets.previousUntil,
    })
    .where('id', '=', id)
    .execute();
}
