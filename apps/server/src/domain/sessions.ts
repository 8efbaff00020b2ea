// Browser sessions (DESIGN §6): made by an entry, named by a cookie whose value is random and
// stored only hashed, ended after 30 minutes without a request. The session page shows the
// outcome of the last action, kept here.
import { timingSafeEqual } from 'node:crypto';
import {
  countBrowserSessions,
  deleteBrowserSessionsSeenBefore,
  insertBrowserSession,
  setBrowserSessionOutcome,
  touchBrowserSession,
} from '../storage/browser-sessions.js';
import { inTransaction } from '../storage/in-transaction.js';
import { countTokens } from '../storage/tokens.js';
import { hashRef, recordAudit, recordSessionsEnded } from './audit.js';
import type { DomainContext } from './context.js';
import { hashToken, looksLikeToken, newToken } from './ids.js';
import { sweepTokens } from './tokens.js';

export const SESSION_IDLE_MS = 30 * 60_000;

/** What the last action of a session did, as the page shows it. */
export interface ActionOutcome {
  action: string;
  /** False when the module or export does not exist (no error: the page just shows the pal). */
  ran: boolean;
  success: boolean;
  messages: { message: string; type?: string | null }[];
}

export interface BrowserSession {
  enterpriseId: string;
  palId: string;
  transactionId: string | null;
  ssoId: string | null;
  role: string | null;
  csrf: string;
  outcome: ActionOutcome | null;
}

/** Starts a session; returns the cookie's value (shown once, stored hashed). */
export async function createSession(
  ctx: DomainContext,
  session: Omit<BrowserSession, 'csrf'>,
): Promise<string> {
  const value = newToken();
  const now = ctx.now().toISOString();
  const row = {
    id_hash: hashToken(value),
    enterprise_id: session.enterpriseId,
    pal_id: session.palId,
    transaction_id: session.transactionId,
    sso_id: session.ssoId,
    role: session.role,
    csrf: newToken(),
    outcome: session.outcome ? JSON.stringify(session.outcome) : null,
    created_at: now,
    last_seen_at: now,
  };
  await inTransaction(ctx.db, async (db) => {
    await insertBrowserSession(db, row);
    await recordAudit(ctx, db, {
      action: 'session.started',
      enterpriseId: session.enterpriseId,
      actor: session.ssoId ? { type: 'sso', id: session.ssoId } : { type: 'anonymous', id: null },
      target: session.transactionId
        ? { type: 'transaction', id: session.transactionId }
        : { type: 'pal', id: session.palId },
      details: { sessionRef: hashRef(row.id_hash), role: session.role },
    });
  });
  return value;
}

/** The live session of a cookie value, its idle time reset; undefined when unknown or ended. */
export async function readSession(
  ctx: DomainContext,
  cookie: string | undefined,
): Promise<BrowserSession | undefined> {
  if (cookie === undefined || !looksLikeToken(cookie)) return undefined;
  const now = ctx.now();
  const row = await touchBrowserSession(
    ctx.db,
    hashToken(cookie),
    now.toISOString(),
    new Date(now.getTime() - SESSION_IDLE_MS).toISOString(),
  );
  if (!row) return undefined;
  return {
    enterpriseId: row.enterprise_id,
    palId: row.pal_id,
    transactionId: row.transaction_id,
    ssoId: row.sso_id,
    role: row.role,
    csrf: row.csrf,
    outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as ActionOutcome),
  };
}

export async function saveOutcome(
  ctx: DomainContext,
  cookie: string,
  outcome: ActionOutcome,
): Promise<void> {
  await setBrowserSessionOutcome(ctx.db, hashToken(cookie), JSON.stringify(outcome));
}

/** The form's CSRF token is the session's, compared in constant time. */
export function csrfMatches(session: BrowserSession, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== session.csrf.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(session.csrf));
}

/** Removes ended sessions; how many. */
export async function sweepSessions(ctx: DomainContext): Promise<number> {
  const before = new Date(ctx.now().getTime() - SESSION_IDLE_MS).toISOString();
  return inTransaction(ctx.db, async (db) => {
    const ended = await deleteBrowserSessionsSeenBefore(db, before);
    await recordSessionsEnded(ctx, db, ended, 'idle');
    return ended.length;
  });
}

/**
 * The sweep of entries: removes tokens that can no longer be redeemed and sessions that ended;
 * says how many were removed and how many are live, for the operator's log.
 */
export async function sweepEntries(ctx: DomainContext): Promise<{
  tokensRemoved: number;
  sessionsRemoved: number;
  liveTokens: number;
  liveSessions: number;
}> {
  const tokensRemoved = await sweepTokens(ctx);
  const sessionsRemoved = await sweepSessions(ctx);
  const [liveTokens, liveSessions] = await Promise.all([
    countTokens(ctx.db),
    countBrowserSessions(ctx.db),
  ]);
  return { tokensRemoved, sessionsRemoved, liveTokens, liveSessions };
}
