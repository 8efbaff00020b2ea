// The events an enterprise's webhook endpoints receive (docs/events.md), and writing them to the
// outbox inside the transaction of the change that causes them: one message per endpoint
// subscribed to the type, delivered after commit by the dispatcher (outbox/dispatcher.ts).
// An event's data names its objects by their API ids and carries no personal data.
import { insertOutboxMessages } from '../storage/outbox-messages.js';
import { listEndpointSubscriptions } from '../storage/webhook-endpoints.js';
import type { DomainContext } from './context.js';
import { randomId } from './ids.js';

export const EVENT_TYPES = [
  'transaction.created',
  'transaction.status_changed',
  'transaction.completed',
  'sso.created',
  'sso.activated',
  'sso.deleted',
  'document.signed',
  'document.signature_cleared',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The three states of a transaction that transaction.status_changed reports. */
export interface TransactionStates {
  status: string;
  systemStatus: string;
  webServiceStatus: string;
}

/** What each event type's `data` holds. */
export interface EventData {
  'transaction.created': { transactionId: string; palId: string } & TransactionStates;
  'transaction.status_changed': {
    transactionId: string;
    palId: string;
    /** The states that moved, by name. */
    changed: (keyof TransactionStates)[];
    previous: TransactionStates;
    current: TransactionStates;
  };
  'transaction.completed': { transactionId: string; palId: string; status: string };
  'sso.created': { sso: string; status: 'ACTIVE' | 'PENDING_ACTIVATION' };
  'sso.activated': { sso: string };
  'sso.deleted': { sso: string };
  /** A person signed a document of a transaction (web mode). */
  'document.signed': SignatureEventData;
  /** A workflow took a signature back (pal.documents.clearSignature). */
  'document.signature_cleared': SignatureEventData;
}

/**
 * A signature of a transaction's document: `documentId` is the document's file, `signatureId`
 * the Signature's id, `sso` its signer (null for an anonymous session).
 */
export interface SignatureEventData {
  transactionId: string;
  palId: string;
  documentId: string;
  signatureId: string;
  sso: string | null;
}

export interface DomainEvent<T extends EventType = EventType> {
  enterpriseId: string;
  type: T;
  data: EventData[T];
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** Whether an endpoint's `events` (`*` or space-separated types) include `type`. */
export function subscribes(events: string, type: EventType): boolean {
  return events === '*' || events.split(' ').includes(type);
}

/** A message id: a webhook's `webhook-id`. */
export function newMessageId(): string {
  return `msg_${randomId()}`;
}

/** Writes one event (see emitEvents); call it inside the change's transaction. */
export function emitEvent<T extends EventType>(
  ctx: DomainContext,
  enterpriseId: string,
  type: T,
  data: EventData[T],
): Promise<void> {
  return emitEvents(ctx, [{ enterpriseId, type, data } as DomainEvent]);
}

/**
 * Writes each event to the outbox once per endpoint of its enterprise subscribed to its type,
 * as the body `{"type","timestamp","data"}` that every attempt sends unchanged. Call it inside
 * the change's transaction (domain/transact.ts), so both commit or neither does.
 */
export async function emitEvents(
  ctx: DomainContext,
  events: readonly DomainEvent[],
): Promise<void> {
  if (events.length === 0) return;
  const now = ctx.now().toISOString();
  const endpoints = new Map<string, { id: string; events: string }[]>();
  const messages = [];
  for (const event of events) {
    let subscriptions = endpoints.get(event.enterpriseId);
    if (!subscriptions) {
      subscriptions = await listEndpointSubscriptions(ctx.db, event.enterpriseId);
      endpoints.set(event.enterpriseId, subscriptions);
    }
    const body = JSON.stringify({ type: event.type, timestamp: now, data: event.data });
    for (const endpoint of subscriptions) {
      if (!subscribes(endpoint.events, event.type)) continue;
      messages.push({
        id: newMessageId(),
        kind: 'webhook' as const,
        enterpriseId: event.enterpriseId,
        endpointId: endpoint.id,
        eventType: event.type,
        payload: body,
      });
    }
  }
  await insertOutboxMessages(ctx.db, messages, now);
}
