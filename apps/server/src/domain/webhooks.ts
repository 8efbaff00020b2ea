// An enterprise's webhook endpoints (docs/events.md): added with the event types they receive,
// listed, removed, their secret rotated (the old one still signs for WEBHOOK_SECRET_OVERLAP_HOURS),
// and a finished delivery sent again. A secret is `whsec_` and 32 random bytes in base64 (the
// Standard Webhooks form), shown once and stored sealed under the server key.
import { randomBytes, type KeyObject } from 'node:crypto';
import {
  findOutboxMessage,
  listEndpointMessages,
  requeueMessage,
  type OutboxMessageRow,
} from '../storage/outbox-messages.js';
import {
  countWebhookEndpoints,
  findWebhookEndpointByUrl,
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  type WebhookEndpointRow,
} from '../storage/webhook-endpoints.js';
import { recordAudit } from './audit.js';
import type { DomainContext } from './context.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';
import { EVENT_TYPES, isEventType, type EventType } from './events.js';
import { randomId } from './ids.js';
import { seal, sealingKey, unseal } from './sealing.js';
import { inTransaction } from './transact.js';
import { checkWebhookUrl } from './webhook-urls.js';

/** Endpoints one enterprise may have: each event is written once per endpoint. */
export const MAX_ENDPOINTS_PER_ENTERPRISE = 16;
/** Deliveries `pal webhook deliveries` shows at most. */
export const MAX_LISTED_DELIVERIES = 100;

const SECRET_PREFIX = 'whsec_';
const SECRET_PURPOSE = 'webhook-secret-aes-256-gcm';

export interface WebhookEndpoint {
  id: string;
  url: string;
  /** The event types it receives; all of them when it was added without --events. */
  events: EventType[] | '*';
  createdAt: string;
  /** Until when the secret before the last rotation still signs, if it does. */
  previousSecretUntil?: string;
}

export interface WebhookDelivery {
  id: string;
  type: string;
  status: string;
  attempts: number;
  nextAttemptAt?: string;
  lastError?: string;
  createdAt: string;
  finishedAt?: string;
}

function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function secretKey(ctx: Pick<DomainContext, 'config'>): KeyObject {
  return sealingKey(ctx.config.secretKey, SECRET_PURPOSE);
}

/** The endpoint's id binds the sealed secret to its row. */
function sealSecret(ctx: DomainContext, endpointId: string, secret: string): string {
  return seal(secretKey(ctx), secret, Buffer.from(endpointId));
}

function openSecret(
  ctx: Pick<DomainContext, 'config'>,
  endpointId: string,
  sealed: string,
): string | undefined {
  return unseal(secretKey(ctx), sealed, Buffer.from(endpointId));
}

function toEndpoint(row: WebhookEndpointRow, now: string): WebhookEndpoint {
  const endpoint: WebhookEndpoint = {
    id: row.id,
    url: row.url,
    events: row.events === '*' ? '*' : (row.events.split(' ') as EventType[]),
    createdAt: row.created_at,
  };
  if (row.previous_secret_until && row.previous_secret_until > now)
    endpoint.previousSecretUntil = row.previous_secret_until;
  return endpoint;
}

function parseEvents(events: readonly string[] | undefined): string {
  if (events === undefined) return '*';
  // An empty list is no way to say "all": a script whose variable came out empty must not
  // subscribe to every event type without a word.
  if (events.length === 0)
    throw new InvalidArgumentError(
      `events: name at least one event type (without --events the endpoint receives all); known: ${EVENT_TYPES.join(', ')}`,
    );
  const unknown = events.filter((e) => !isEventType(e));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `events: unknown event type ${unknown.map((e) => `"${e}"`).join(', ')}; known: ${EVENT_TYPES.join(', ')}`,
    );
  return [...new Set(events)].join(' ');
}

/** Adds an endpoint; answers it with its secret, which is not shown again. */
export async function addWebhookEndpoint(
  ctx: DomainContext,
  enterpriseId: string,
  input: { url: string; events?: readonly string[] },
): Promise<WebhookEndpoint & { secret: string }> {
  const events = parseEvents(input.events);
  const url = await checkWebhookUrl(input.url, ctx.config.outbox.webhookAllowPrivate);
  // A second endpoint at one URL would get every event it shares with the first twice.
  const same = await findWebhookEndpointByUrl(ctx.db, enterpriseId, url);
  if (same)
    throw new ConflictError(
      `the enterprise has an endpoint at ${url} already (${same.id}): remove it first to change its events`,
    );
  if ((await countWebhookEndpoints(ctx.db, enterpriseId)) >= MAX_ENDPOINTS_PER_ENTERPRISE)
    throw new ConflictError(
      `the enterprise has ${MAX_ENDPOINTS_PER_ENTERPRISE} webhook endpoints, the most it may have`,
    );
  const id = `ep_${randomId()}`;
  const secret = newSecret();
  const now = ctx.now().toISOString();
  const row: WebhookEndpointRow = {
    id,
    enterprise_id: enterpriseId,
    url,
    events,
    secret: sealSecret(ctx, id, secret),
    previous_secret: null,
    previous_secret_until: null,
    created_at: now,
  };
  await inTransaction(ctx, async (dbTx) => {
    await insertWebhookEndpoint(dbTx.db, row);
    await recordAudit(ctx, dbTx.db, {
      action: 'webhook.added',
      enterpriseId,
      target: { type: 'webhook', id },
      // The host only: a webhook URL may carry a secret of its own (a path or query token).
      details: { host: new URL(url).host, events },
    });
  });
  ctx.log.info({ enterpriseId, endpointId: id, url }, 'webhook endpoint added');
  return { ...toEndpoint(row, now), secret };
}

export async function listEndpoints(
  ctx: DomainContext,
  enterpriseId: string,
): Promise<WebhookEndpoint[]> {
  const now = ctx.now().toISOString();
  return (await listWebhookEndpoints(ctx.db, enterpriseId)).map((row) => toEndpoint(row, now));
}

async function endpointRow(ctx: DomainContext, id: string): Promise<WebhookEndpointRow> {
  const row = await findWebhookEndpoint(ctx.db, id);
  if (!row) throw NotFoundError.of('webhook endpoint', id);
  return row;
}

/** Removes the endpoint and every delivery of it, pending ones included. 404 when unknown. */
export async function removeEndpoint(ctx: DomainContext, id: string): Promise<void> {
  const { enterprise_id: enterpriseId, url } = await endpointRow(ctx, id);
  const host = new URL(url).host;
  await inTransaction(ctx, async (dbTx) => {
    if (!(await deleteWebhookEndpoint(dbTx.db, id))) throw NotFoundError.of('webhook endpoint', id);
    await recordAudit(ctx, dbTx.db, {
      action: 'webhook.removed',
      enterpriseId,
      target: { type: 'webhook', id },
      details: { host },
    });
  });
  ctx.log.info({ endpointId: id }, 'webhook endpoint removed');
}

/**
 * A new secret, shown once; the current one still signs beside it (a second signature in
 * `webhook-signature`) for WEBHOOK_SECRET_OVERLAP_HOURS, so the receiver can switch over.
 */
export async function rotateEndpointSecret(
  ctx: DomainContext,
  id: string,
): Promise<{ id: string; url: string; secret: string; previousSecretUntil: string }> {
  const row = await endpointRow(ctx, id);
  const secret = newSecret();
  const previousUntil = new Date(
    ctx.now().getTime() + ctx.config.outbox.webhookSecretOverlapMs,
  ).toISOString();
  await inTransaction(ctx, async (dbTx) => {
    await rotateWebhookSecret(dbTx.db, id, {
      secret: sealSecret(ctx, id, secret),
      previousSecret: row.secret,
      previousUntil,
    });
    await recordAudit(ctx, dbTx.db, {
      action: 'webhook.secret_rotated',
      enterpriseId: row.enterprise_id,
      target: { type: 'webhook', id },
      details: { previousSecretUntil: previousUntil },
    });
  });
  ctx.log.info({ endpointId: id }, 'webhook endpoint secret rotated');
  // As `add` shows a secret (DESIGN §12: `{"id", "url", "secret"}`), and until when the old signs.
  return { id, url: row.url, secret, previousSecretUntil: previousUntil };
}

/**
 * The secrets that sign a delivery to the endpoint at `now`: the current one, and the one before
 * the last rotation while its overlap lasts. Empty when none opens (the server key changed).
 */
export function signingSecrets(
  ctx: Pick<DomainContext, 'config'>,
  row: WebhookEndpointRow,
  now: Date,
): string[] {
  const secrets = [openSecret(ctx, row.id, row.secret)];
  if (
    row.previous_secret &&
    row.previous_secret_until &&
    row.previous_secret_until > now.toISOString()
  )
    secrets.push(openSecret(ctx, row.id, row.previous_secret));
  return secrets.filter((s): s is string => s !== undefined);
}

function toDelivery(row: OutboxMessageRow): WebhookDelivery {
  const delivery: WebhookDelivery = {
    id: row.id,
    type: row.event_type ?? '',
    status: row.status,
    attempts: row.attempts,
    createdAt: row.created_at,
  };
  if (row.status === 'pending') delivery.nextAttemptAt = row.next_attempt_at;
  if (row.last_error) delivery.lastError = row.last_error;
  if (row.finished_at) delivery.finishedAt = row.finished_at;
  return delivery;
}

/** The endpoint's latest deliveries, newest first. 404 when the endpoint is unknown. */
export async function listDeliveries(
  ctx: DomainContext,
  endpointId: string,
): Promise<WebhookDelivery[]> {
  await endpointRow(ctx, endpointId);
  const rows = await listEndpointMessages(ctx.db, endpointId, MAX_LISTED_DELIVERIES);
  return rows.map(toDelivery);
}

/**
 * Sends a finished (failed or delivered) webhook message again, with the same webhook-id and
 * body and a fresh retry window. 404: no such webhook message; 409: it is still pending.
 */
export async function redeliver(ctx: DomainContext, messageId: string): Promise<WebhookDelivery> {
  const message = await findOutboxMessage(ctx.db, messageId);
  if (!message || message.kind !== 'webhook') throw NotFoundError.of('webhook message', messageId);
  if (!(await requeueMessage(ctx.db, messageId, ctx.now().toISOString())))
    throw new ConflictError(`webhook message "${messageId}" is still waiting to be delivered`);
  ctx.log.info({ messageId, endpointId: message.endpoint_id }, 'webhook message redelivered');
  return toDelivery((await findOutboxMessage(ctx.db, messageId))!);
}
