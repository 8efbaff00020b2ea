// One database transaction around a piece of domain work, so that a change and the messages it
// causes (events, mails: docs/events.md) commit together or not at all.
import type { DomainContext } from './context.js';

/** Runs `work` in the caller's transaction when there is one, else in a new one. */
export function inTransaction<T>(
  ctx: DomainContext,
  work: (dbTx: DomainContext) => Promise<T>,
): Promise<T> {
  if (ctx.db.isTransaction) return work(ctx);
  return ctx.db.transaction().execute((trx) => work({ ...ctx, db: trx }));
}
