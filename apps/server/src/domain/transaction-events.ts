// The events of a transaction's states (docs/events.md): transaction.status_changed when status,
// systemStatus or webServiceStatus moved in one database transaction (old and new values), and
// transaction.completed when systemStatus became COMPLETED. Written by comparing the row before
// the work (locked, so no other writer moves it meanwhile) with the row after it. Completing a
// transaction also queues the job that writes its completed PDFs (domain/completed-documents.ts).
import type { TransactionRow } from '../storage/schema.js';
import { findTransactionRow } from '../storage/transactions.js';
import { queueCompletion } from './completed-documents.js';
import type { DomainContext } from './context.js';
import { NotFoundError } from './errors.js';
import { emitEvents, type DomainEvent, type TransactionStates } from './events.js';
import { inTransaction } from './transact.js';
import { requireId } from './validate.js';

type StateRow = Pick<
  TransactionRow,
  'id' | 'enterprise_id' | 'pal_id' | 'status' | 'system_status' | 'web_service_status'
>;

function states(
  row: Pick<StateRow, 'status' | 'system_status' | 'web_service_status'>,
): TransactionStates {
  return {
    status: row.status,
    systemStatus: row.system_status,
    webServiceStatus: row.web_service_status,
  };
}

/** The events that a move from `before` to `after` makes (none when nothing moved). */
export function transactionChangeEvents(before: StateRow, after: StateRow): DomainEvent[] {
  const previous = states(before);
  const current = states(after);
  const changed = (Object.keys(current) as (keyof TransactionStates)[]).filter(
    (key) => previous[key] !== current[key],
  );
  if (changed.length === 0) return [];
  const ids = { transactionId: after.id, palId: after.pal_id };
  const events: DomainEvent[] = [
    {
      enterpriseId: after.enterprise_id,
      type: 'transaction.status_changed',
      data: { ...ids, changed, previous, current },
    },
  ];
  if (current.systemStatus === 'COMPLETED' && previous.systemStatus !== 'COMPLETED') {
    events.push({
      enterpriseId: after.enterprise_id,
      type: 'transaction.completed',
      data: { ...ids, status: current.status },
    });
  }
  return events;
}

/**
 * What a piece of work on a transaction did: its result, and the transaction as the work's last
 * change of it left it (the row that change's UPDATE answered), or `unchanged` when the work
 * changed nothing of the transaction's row.
 */
export interface TransactionWork<T> {
  result: T;
  after: TransactionStateDetails | 'unchanged';
}

/**
 * What the events need of a transaction, named as the domain's TransactionDetails (which it
 * fits). Not a Pick of it: transactions.ts imports this module, and the import graph has no cycles
 * (src/import-graph.test.ts).
 */
export interface TransactionStateDetails {
  id: string;
  enterpriseId: string;
  palId: string;
  status: string;
  systemStatus: string;
  webServiceStatus: string;
}

/**
 * Runs `work` on the transaction in one database transaction and writes the events of whatever
 * it moved. The row before is read and locked first, so no other writer moves it until the
 * commit; the row after is the one `work` says its last change left (every change of a
 * transaction's row is an UPDATE … RETURNING of storage/transactions.ts), so it is not read again.
 */
export function withTransactionEvents<T>(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  work: (dbTx: DomainContext) => Promise<TransactionWork<T>>,
): Promise<T> {
  return inTransaction(ctx, async (dbTx) => {
    const id = requireId('id', transactionId);
    const before = await findTransactionRow(dbTx.db, enterpriseId, id, { lock: true });
    if (!before) throw NotFoundError.of('transaction', transactionId);
    const done = await work(dbTx);
    if (done.after === 'unchanged') return done.result;
    const after = done.after;
    const events = transactionChangeEvents(before, {
      id: after.id,
      enterprise_id: after.enterpriseId,
      pal_id: after.palId,
      status: after.status,
      system_status: after.systemStatus,
      web_service_status: after.webServiceStatus,
    });
    await emitEvents(dbTx, events);
    // The completed PDFs are written after this commit, by a job of the outbox.
    if (events.some((e) => e.type === 'transaction.completed'))
      await queueCompletion(dbTx, enterpriseId, id);
    return done.result;
  });
}

/** The events of transactions moved in bulk from one systemStatus (the expiry sweep). */
export function bulkMoveEvents(
  moved: readonly Omit<StateRow, 'system_status'>[],
  from: string,
  to: string,
): DomainEvent[] {
  return moved.flatMap((row) =>
    transactionChangeEvents({ ...row, system_status: from }, { ...row, system_status: to }),
  );
}
