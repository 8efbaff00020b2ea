// Audit records of attempts that anyone may repeat at will: wrong client secrets and entry tokens
// that cannot be used (docs/events.md). Each is bounded so that recording cannot
// become a durable write per request: only attempts at something that exists (a client's
// username, a token this service issued) are recorded, at most a few a minute per client or
// token and node, the rest counted into the next record.
import { isClientUsername, findClientCredential } from './clients.js';
import type { DomainContext } from './context.js';
import { hashRef, recordAudit } from './audit.js';
import { hashToken, looksLikeToken } from './ids.js';
import { findTokenByHash } from '../storage/tokens.js';

/** How many records of one kind of attempt one key (a client, a token) gets per minute per node. */
const ATTEMPT_RECORDS_PER_MINUTE = 10;
const ATTEMPT_WINDOW_MS = 60_000;
/** Keys remembered at the most (then the counts start afresh). */
const ATTEMPT_KEYS_MAX = 10_000;

/**
 * Bounds the records of attempts that anyone may repeat at will (wrong secrets, used tokens), so
 * that recording them cannot become a durable write per request: per key and node at most
 * ATTEMPT_RECORDS_PER_MINUTE a minute; attempts past it are counted, and the next record of that
 * key says how many went unrecorded (`details.unrecorded`).
 */
export class AttemptBudget {
  private readonly windows = new Map<
    string,
    { start: number; written: number; unrecorded: number }
  >();

  constructor(private readonly perMinute = ATTEMPT_RECORDS_PER_MINUTE) {}

  /** Whether to record this attempt, and how many before it went unrecorded. */
  take(key: string, now: number): { record: boolean; unrecorded: number } {
    let window = this.windows.get(key);
    if (!window || now - window.start >= ATTEMPT_WINDOW_MS) {
      if (!window && this.windows.size >= ATTEMPT_KEYS_MAX) this.windows.clear();
      window = { start: now, written: 0, unrecorded: window?.unrecorded ?? 0 };
      this.windows.set(key, window);
    }
    if (window.written >= this.perMinute) {
      window.unrecorded += 1;
      return { record: false, unrecorded: 0 };
    }
    window.written += 1;
    const unrecorded = window.unrecorded;
    window.unrecorded = 0;
    return { record: true, unrecorded };
  }
}

const wrongSecrets = new AttemptBudget();
const refusedTokens = new AttemptBudget();

/**
 * `auth.failed`: BASIC credentials with a wrong secret. The caller need not wait for it (the
 * authentication hook does not: recording adds nothing to the 401's time). Called only for attempts the sign-in
 * throttle answered 401 (not 429: a throttled pair's guesses are not recorded, as they are not
 * counted), and recorded only for usernames of existing clients (whose enterprise it goes to),
 * within the AttemptBudget per client. Never throws: a failed record must not change the 401.
 */
export async function recordWrongSecret(
  ctx: DomainContext,
  username: string,
  request: { ip: string; requestId: string },
): Promise<void> {
  try {
    if (!isClientUsername(username)) return;
    const budget = wrongSecrets.take(username, Date.now());
    if (!budget.record) return;
    const client = await findClientCredential(ctx, username);
    if (!client) return;
    await recordAudit(ctx, ctx.db, {
      action: 'auth.failed',
      enterpriseId: client.enterpriseId,
      outcome: 'failure',
      actor: { type: 'client', id: username },
      target: { type: 'client', id: username },
      ip: request.ip,
      requestId: request.requestId,
      details: budget.unrecorded > 0 ? { unrecorded: budget.unrecorded } : undefined,
    });
  } catch (error) {
    ctx.log.error(
      { err: error, reqId: request.requestId },
      'audit record of a wrong secret failed',
    );
  }
}

/**
 * `token.refused`: an entry token that could not be used (already used, expired, or what it was
 * for cannot be done now). Recorded only for tokens this service issued and still holds (spent
 * tokens are swept within a minute or two), so a stranger's made-up tokens cost a read and no
 * write; within the AttemptBudget per token. Never throws.
 */
export async function recordRefusedToken(
  ctx: DomainContext,
  token: string,
  reason: string,
): Promise<void> {
  try {
    if (!looksLikeToken(token)) return;
    const hash = hashToken(token);
    const row = await findTokenByHash(ctx.db, hash);
    if (!row) return;
    const budget = refusedTokens.take(hash, Date.now());
    if (!budget.record) return;
    const now = ctx.now().toISOString();
    const why = row.used_at !== null ? 'used' : row.expires_at <= now ? 'expired' : reason;
    await recordAudit(ctx, ctx.db, {
      action: 'token.refused',
      enterpriseId: row.enterprise_id,
      outcome: 'failure',
      target: row.transaction_id
        ? { type: 'transaction', id: row.transaction_id }
        : { type: 'pal', id: row.pal_id ?? '' },
      details: {
        kind: row.kind,
        tokenRef: hashRef(hash),
        reason: why,
        ...(budget.unrecorded > 0 ? { unrecorded: budget.unrecorded } : {}),
      },
    });
  } catch (error) {
    ctx.log.error({ err: error }, 'audit record of a refused token failed');
  }
}
