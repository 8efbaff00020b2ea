// The audit log (docs/events.md): one append-only record per security-relevant
// act: who (an API client, a person by their SSO, the operator), which enterprise, what (a
// stable action code), on what, with which outcome, when, from which address, in which request.
//
// recordAudit(ctx, db, entry) is the one way in. Call it with the act's own database transaction
// (`db` = its trx) so that an act rolled back leaves no record; an act of one statement without a
// transaction records right after it (or both go into inTransaction). Who, address and request id
// come from the request scope (domain/request-scope.ts) unless the entry names them.
//
// Never a secret: no client secret, token, session cookie, password or mail-link value goes into
// a record. A token or session is named by `hashRef`, the first 12 characters of the SHA-256 its
// table stores already: enough to tie an issue to its redemption, useless to enter with.
import type { DomainContext } from './context.js';
import { currentScope, type Actor } from './request-scope.js';
import type { Db } from '../storage/database.js';
import { deleteAuditRowsBefore, insertAuditRows, listAuditRows } from '../storage/audit-log.js';
import type { AuditRow, AuditRowValues } from '../storage/audit-log.js';
import { inSweepBatches } from './sweep-batches.js';

/** Every action code, with what it records. Codes are stable: tools filter on them. */
export const AUDIT_ACTIONS = {
  'auth.failed': 'an API client authenticated with a wrong secret',
  'client.created': 'an API client was created (CLI)',
  'client.deleted': 'an API client was deleted',
  'client.secret_rotated': "an API client's secret was replaced",
  'token.issued': 'an entry token was issued (C6, T5, T8, P3)',
  'token.redeemed': 'an entry token was redeemed',
  'token.refused': 'a used, expired or unusable entry token was presented',
  'session.started': 'a browser session started (an entry, a mailed link)',
  'session.ended': 'a browser session ended',
  'sso.created': 'an SSO was created (E1, a guest at P3 entry)',
  'sso.invited': 'a person was invited (E3)',
  'sso.activated': 'an invitation was accepted',
  'sso.updated': "an SSO's person was changed (E6)",
  'sso.deleted': 'an SSO was deleted (E2)',
  'grant.given': 'console access was granted (C3)',
  'grant.removed': 'console access was removed (C4)',
  'roles.removed': 'roles were removed from an SSO (T4, T7, a workflow)',
  'webhook.added': 'a webhook endpoint was added',
  'webhook.removed': 'a webhook endpoint was removed',
  'webhook.changed': 'a webhook endpoint was changed (its events, its URL)',
  'webhook.secret_rotated': "a webhook endpoint's signing secret was replaced",
  'pal.deployed': 'a pal version was deployed',
  'document.signed': 'a person signed a document',
  'document.signature_cleared': 'a workflow took a signature back, to be given again',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export type AuditOutcome = 'success' | 'failure';

/** Small facts about the act. Strings, numbers and booleans only; never a secret. */
export type AuditDetails = Readonly<Record<string, string | number | boolean | null>>;

export interface AuditEntry {
  action: AuditAction;
  enterpriseId: string;
  /** Default `success`; `failure` for refused attempts (a wrong secret, a used token). */
  outcome?: AuditOutcome;
  /** What the act was done to, e.g. `{ type: 'sso', id }`. */
  target?: { type: string; id: string };
  details?: AuditDetails;
  /** Who, when not the request's caller (a person entering, an SSO accepting). */
  actor?: Actor;
  /** The request's address and id, when the request scope does not hold them. */
  ip?: string;
  requestId?: string;
}

/** A record as `pal audit` shows it (and prints with --json). */
export interface AuditRecord {
  id: number;
  time: string;
  enterpriseId: string;
  action: string;
  outcome: string;
  actorType: string;
  actor?: string;
  targetType?: string;
  target?: string;
  ip?: string;
  requestId?: string;
  details?: Record<string, unknown>;
}

/** The reference a record gives a token or session: a prefix of the SHA-256 the table stores. */
export function hashRef(storedHash: string): string {
  return storedHash.slice(0, 12);
}

/** Writes the record with `db`: pass the act's transaction (see the top of this file). */
export async function recordAudit(
  ctx: Pick<DomainContext, 'now'>,
  db: Db,
  entry: AuditEntry,
): Promise<void> {
  await recordAudits(ctx, db, [entry]);
}

/** Several records in one statement (e.g. every session a sweep ended). */
export async function recordAudits(
  ctx: Pick<DomainContext, 'now'>,
  db: Db,
  entries: readonly AuditEntry[],
): Promise<void> {
  const scope = currentScope();
  const at = ctx.now().toISOString();
  const rows = entries.map((entry): AuditRowValues => {
    const actor = entry.actor ?? scope?.actor ?? { type: scope ? 'anonymous' : 'system', id: null };
    return {
      at,
      enterprise_id: entry.enterpriseId,
      action: entry.action,
      outcome: entry.outcome ?? 'success',
      actor_type: actor.type,
      actor: actor.id,
      target_type: entry.target?.type ?? null,
      target: entry.target?.id ?? null,
      ip: entry.ip ?? scope?.ip ?? null,
      request_id: entry.requestId ?? scope?.requestId ?? null,
      details:
        entry.details && Object.keys(entry.details).length > 0
          ? JSON.stringify(entry.details)
          : null,
    };
  });
  await insertAuditRows(db, rows);
}

/** `session.ended` for sessions that have ended (their rows, as the sweep removed them). */
export function recordSessionsEnded(
  ctx: Pick<DomainContext, 'now'>,
  db: Db,
  sessions: readonly {
    id_hash: string;
    enterprise_id: string;
    pal_id: string;
    transaction_id: string | null;
    sso_id: string | null;
  }[],
  reason: string,
): Promise<void> {
  return recordAudits(
    ctx,
    db,
    sessions.map((s) => ({
      action: 'session.ended',
      enterpriseId: s.enterprise_id,
      actor: { type: 'system', id: null },
      target: s.transaction_id
        ? { type: 'transaction', id: s.transaction_id }
        : { type: 'pal', id: s.pal_id },
      details: { sessionRef: hashRef(s.id_hash), sso: s.sso_id, reason },
    })),
  );
}

// ------------------------------------------------------------------ reading and retention

/** Rows read per query while listing (memory stays bounded however long the log is). */
const LIST_PAGE = 1000;

/** The enterprise's records from `since` on, oldest first, a page at a time. */
export async function* listAuditRecords(
  ctx: Pick<DomainContext, 'db'>,
  enterpriseId: string,
  since?: Date,
): AsyncGenerator<AuditRecord> {
  let afterId = 0;
  for (;;) {
    const rows = await listAuditRows(ctx.db, {
      enterpriseId,
      since: since?.toISOString(),
      afterId,
      limit: LIST_PAGE,
    });
    for (const row of rows) yield toRecord(row);
    if (rows.length < LIST_PAGE) return;
    afterId = rows[rows.length - 1]!.id;
  }
}

function toRecord(row: AuditRow): AuditRecord {
  const record: AuditRecord = {
    id: Number(row.id),
    time: row.at,
    enterpriseId: row.enterprise_id,
    action: row.action,
    outcome: row.outcome,
    actorType: row.actor_type,
  };
  if (row.actor !== null) record.actor = row.actor;
  if (row.target_type !== null) record.targetType = row.target_type;
  if (row.target !== null) record.target = row.target;
  if (row.ip !== null) record.ip = row.ip;
  if (row.request_id !== null) record.requestId = row.request_id;
  if (row.details !== null) record.details = JSON.parse(row.details) as Record<string, unknown>;
  return record;
}

/**
 * Deletes the records older than AUDIT_RETENTION_DAYS; how many. In batches (sweep-batches.ts),
 * so that a first sweep over years of records holds no lock, and stalls nothing, for long.
 */
export async function sweepAuditLog(ctx: DomainContext): Promise<number> {
  const before = new Date(
    ctx.now().getTime() - ctx.config.auditRetentionDays * 86_400_000,
  ).toISOString();
  return inSweepBatches((limit) => deleteAuditRowsBefore(ctx.db, before, limit));
}
