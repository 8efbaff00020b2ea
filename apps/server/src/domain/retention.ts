// What the server's sweep removes once it is past its time: audit records older than
// AUDIT_RETENTION_DAYS and idempotency keys older than 24 hours. One node at a time on a shared
// PostgreSQL database, like the expiry sweep (the others skip the round).
import { dialectOf } from '../storage/adapter-dialect.js';
import { sweepAuditLog } from './audit.js';
import type { DomainContext } from './context.js';
import { sweepIdempotencyKeys } from './idempotency.js';

export interface RetentionSweep {
  auditRecords: number;
  idempotencyKeys: number;
}

/** Removes what is past its time; undefined when another node is sweeping. */
export function sweepRetention(ctx: DomainContext): Promise<RetentionSweep | undefined> {
  return dialectOf(ctx.db).runExclusively(ctx.db, 'retention-sweep', async () => ({
    auditRecords: await sweepAuditLog(ctx),
    idempotencyKeys: await sweepIdempotencyKeys(ctx),
  }));
}
