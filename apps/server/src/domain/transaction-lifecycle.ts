// The lifecycle of a transaction, as two small state machines (docs/transactions.md):
//
// systemStatus, owned by the service:
//
//            complete            archive
//   OPEN ──────────────▶ COMPLETED ─────┐
//    │ │    cancel                       ▼
//    │ └──────────────▶ CANCELLED ───▶ ARCHIVED   (final)
//    │      expire                       ▲
//    └────────────────▶ EXPIRED ────────┘
//   COMPLETED, CANCELLED, EXPIRED ──reopen──▶ OPEN
//
// webServiceStatus, the state of the transaction's web-service workflow (T6, T9):
//
//   IDLE ──start──▶ RUNNING ──succeed──▶ SUCCEEDED ──start──▶ RUNNING …
//                      └──────fail────▶ FAILED ─────start──▶ RUNNING …
//
// `status` is the business status a workflow gives the transaction (free text, "NEW" at first);
// it is not a state machine. Illegal moves throw ConflictError (409).
import { ConflictError } from './errors.js';

export const SYSTEM_STATUSES = ['OPEN', 'COMPLETED', 'CANCELLED', 'EXPIRED', 'ARCHIVED'] as const;
export type SystemStatus = (typeof SYSTEM_STATUSES)[number];

export const WEB_SERVICE_STATUSES = ['IDLE', 'RUNNING', 'SUCCEEDED', 'FAILED'] as const;
export type WebServiceStatus = (typeof WEB_SERVICE_STATUSES)[number];

export const INITIAL_STATUS = 'NEW';
export const INITIAL_SYSTEM_STATUS: SystemStatus = 'OPEN';
export const INITIAL_WEB_SERVICE_STATUS: WebServiceStatus = 'IDLE';

/** Moves of systemStatus: the states each may start from, and where it leads. */
export const TRANSACTION_EVENTS = {
  /** The workflow has finished the transaction's work; participants may still read it. */
  complete: { from: ['OPEN'], to: 'COMPLETED' },
  /** The enterprise or the workflow withdrew it before it was finished. */
  cancel: { from: ['OPEN'], to: 'CANCELLED' },
  /** The service: executeEndDate passed while the transaction was open. */
  expire: { from: ['OPEN'], to: 'EXPIRED' },
  /** The enterprise or the workflow opens an ended transaction again (e.g. a deadline moved). */
  reopen: { from: ['COMPLETED', 'CANCELLED', 'EXPIRED'], to: 'OPEN' },
  /** The service (accessEndDate passed) or the enterprise: kept for the record, no more access. */
  archive: { from: ['COMPLETED', 'CANCELLED', 'EXPIRED'], to: 'ARCHIVED' },
} as const satisfies Record<string, { from: readonly SystemStatus[]; to: SystemStatus }>;
export type TransactionEvent = keyof typeof TRANSACTION_EVENTS;

export const WEB_SERVICE_EVENTS = {
  start: { from: ['IDLE', 'SUCCEEDED', 'FAILED'], to: 'RUNNING' },
  succeed: { from: ['RUNNING'], to: 'SUCCEEDED' },
  fail: { from: ['RUNNING'], to: 'FAILED' },
} as const satisfies Record<string, { from: readonly WebServiceStatus[]; to: WebServiceStatus }>;
export type WebServiceEvent = keyof typeof WEB_SERVICE_EVENTS;

/**
 * systemStatus values in which the transaction's workflows may run: the web-service workflow (T6,
 * T9) and the actions of browser sessions alike (requireRunnable).
 */
export const RUNNABLE_SYSTEM_STATUSES: readonly SystemStatus[] = ['OPEN', 'COMPLETED'];

/** ConflictError unless the transaction's workflows may run while its systemStatus is `status`. */
export function requireRunnable(status: string): void {
  if (!(RUNNABLE_SYSTEM_STATUSES as readonly string[]).includes(status)) {
    throw new ConflictError(
      `workflows of this transaction cannot run while its systemStatus is ${status}`,
    );
  }
}

/**
 * Whether people may still enter and look at the transaction: not once it is ARCHIVED ("kept for
 * the record, no more access"), whatever session, token or mailed link they hold.
 */
export function isAccessible(status: string): boolean {
  return status !== TRANSACTION_EVENTS.archive.to;
}

export function isTransactionEvent(value: string): value is TransactionEvent {
  return Object.hasOwn(TRANSACTION_EVENTS, value);
}

/** Where `event` leads from `from`; ConflictError when the move is not allowed. */
export function nextSystemStatus(from: string, event: TransactionEvent): SystemStatus {
  const move = TRANSACTION_EVENTS[event];
  if (!(move.from as readonly string[]).includes(from)) {
    throw new ConflictError(
      `cannot ${event} a transaction whose systemStatus is ${from} (allowed from ${move.from.join(', ')})`,
    );
  }
  return move.to;
}

/** Where `event` leads from `from`; ConflictError when the move is not allowed. */
export function nextWebServiceStatus(from: string, event: WebServiceEvent): WebServiceStatus {
  const move = WEB_SERVICE_EVENTS[event];
  if (!(move.from as readonly string[]).includes(from)) {
    // A run in progress ends by itself: Retry-After says so (and keeps the answer out of an
    // Idempotency-Key, whose retry should then do the work).
    if (event === 'start')
      throw new ConflictError('the web-service workflow of this transaction is already running', 1);
    throw new ConflictError(`cannot ${event} a web-service run whose status is ${from}`);
  }
  return move.to;
}
