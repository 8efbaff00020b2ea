// Browser sessions (docs/entry.md): made by an entry, named by a cookie whose value is random and
// stored only hashed (a cookie per session: a browser holds one for each link it opened), ended
// after 30 minutes without a request and 12 hours after they started, however active, and at the
// first request after their person's standing is gone (./session-standing.ts). The session page
// shows the outcome of the last action, kept here bounded (OUTCOME_MESSAGES_MAX).
import { timingSafeEqual } from 'node:crypto';
import { cut, wholeSlice } from '../text-cut.js';
import {
  countBrowserSessions,
  deleteBrowserSession,
  deleteEndedBrowserSessions,
  deleteOlderMailSessions,
  insertBrowserSession,
  liveBrowserSessions,
  setBrowserSessionOutcome,
  touchBrowserSession,
  type BrowserSessionRow,
} from '../storage/browser-sessions.js';
import type { ConsoleProfile, SessionKind } from '../storage/schema.js';
import { readSessionDraftFiles, replaceSessionDraftFiles } from '../storage/session-draft-files.js';
import { countTokens } from '../storage/tokens.js';
import { hashRef, recordAudits, recordSessionsEnded, type AuditEntry } from './audit.js';
import type { DomainContext } from './context.js';
import { hashToken, looksLikeToken, newToken } from './ids.js';
import { sessionStanding, type SessionBasis } from './session-standing.js';
import { sweepTokens } from './tokens.js';
import { inTransaction } from './transact.js';
import { inSweepBatches } from './sweep-batches.js';

export type { SessionKind } from '../storage/schema.js';

export const SESSION_IDLE_MS = 30 * 60_000;
/**
 * A session ends this long after it started, however active: a cookie that leaked (a shared
 * computer, a forwarded link's session) is not good for ever.
 */
export const SESSION_LIFETIME_MS = 12 * 60 * 60_000;

/**
 * The sessions one person may hold through mailed links to one transaction; starting one more
 * ends the oldest. A link enters at every use for its seven days, and each session may keep a
 * form's worth of what was typed: without a bound, one link could fill the disk. Ten is more
 * browsers and tabs than a person opens one claim in at once.
 */
export const MAIL_LINK_SESSIONS = 10;

/**
 * The most messages of an outcome a session keeps, and so the most its page shows; further ones
 * are said in one last line ("and 179,900 more messages"). A run may return as many as its
 * result's 4,194,304 characters of JSON hold (180,000 short ones): kept whole, every view of the
 * page read and wrote them all again, and a reload runs nothing, so the enterprise's cap on runs
 * never counted it. A person reads a few: the demo pals answer with one to four, the team
 * directory's list with one line for each of its 20 people, and a workflow that checks a form
 * with one a problem.
 */
export const OUTCOME_MESSAGES_MAX = 100;

/**
 * The most characters of one message kept, cut past them (saying so): a run's thrown error is
 * cut to as many, the same way (text-cut.ts), and a sentence a person reads on a page is far
 * shorter. Without it, one message could be the run's whole 4 MB result.
 */
export const OUTCOME_MESSAGE_LENGTH = 2000;

/** The most characters of a message's type kept: a code (INFO, INVALID_ARGUMENT), not prose. */
export const OUTCOME_TYPE_LENGTH = 100;

/** The type of the last line that says how many messages were left out (a code, as INFO is). */
export const MORE_MESSAGES = 'MORE_MESSAGES';

/** Counts in messages people read: 65,536, not 65536. */
export const COUNT = new Intl.NumberFormat('en-US');

/** What the last action of a session did, as the page shows it. */
export interface ActionOutcome {
  action: string;
  /**
   * False when nothing ran: the module or export does not exist (`success` true: no error, the
   * page just shows the pal), or a session form was stopped before the run (`success` false: a
   * required signature or upload missing; `messages` say which).
   */
  ran: boolean;
  success: boolean;
  /** Asked for by a button of the page's form, not by the entry or a mailed link. */
  pressed?: boolean;
  messages: { message: string; type?: string | null }[];
  /** What the person typed in a form that did not go through, so the page can refill it. */
  draft?: FormDraft;
  /**
   * When it was kept (saveOutcome): a transaction changed after it (another person's action, a
   * client's run) has moved on, and its messages no longer say where things stand.
   */
  savedAt?: string;
}

/** A signature as the person gave it in a form that did not go through. */
export type DraftSignature =
  | { kind: 'TYPED'; text: string }
  /** The drawn PNG as its `data:image/png;base64,…` URL, as the form posted it. */
  | { kind: 'DRAWN'; image: string };

/** The form as posted: field id → value, signature id → what was given. */
export interface FormDraft {
  values: Record<string, string>;
  signatures: Record<string, DraftSignature>;
  /**
   * Upload name → the file the form held for it, kept with the session (DraftFile) and sent
   * again by the next submission unless the person chooses another.
   */
  files?: Record<string, { filename: string; size: number; keptAt?: string }>;
}

/** A file of a form that did not go through, kept for the next submission of its page. */
export interface DraftFile {
  /** The manifest's upload name. */
  name: string;
  filename: string;
  content: Uint8Array;
}

/** A kept file as read back: when its form failed. */
export interface KeptFile extends DraftFile {
  savedAt: string;
}

export interface BrowserSession {
  kind: SessionKind;
  enterpriseId: string;
  palId: string;
  transactionId: string | null;
  /** The person acting, as the page and the workflow see them; null for anonymous sessions. */
  ssoId: string | null;
  /** The SSO whose standing the session rests on (for anonymous sessions, the T8 token's). */
  standingSso: string;
  role: string | null;
  /** Console sessions: the profile of the console grant. */
  profile: ConsoleProfile | null;
  csrf: string;
  outcome: ActionOutcome | null;
}

/** What starts a session. */
export type SessionStart = Omit<BrowserSession, 'csrf' | 'ssoId'>;

/** What the cookie of a request names. */
export type SessionRead =
  /** `cookie`: the value that names it, which its page sends back and keeps with the outcome. */
  | { state: 'live'; session: BrowserSession; cookie: string }
  /** No cookie, an unknown one, or a session that ended (idle, or past its lifetime). */
  | { state: 'none' }
  /** The session just ended because its person may no longer act; `reason` says why. */
  | { state: 'withdrawn'; reason: string };

export function basisOf(session: SessionStart): SessionBasis {
  const { kind, enterpriseId, palId, transactionId, standingSso, role, profile } = session;
  return { kind, enterpriseId, palId, transactionId, standingSso, role, profile };
}

/** A session as the page and the workflow see it. */
export function sessionOf(start: SessionStart, csrf = ''): BrowserSession {
  return {
    ...start,
    ssoId: start.kind === 'anonymous' ? null : start.standingSso,
    csrf,
  };
}

/**
 * Starts a session; returns the cookie's value (shown once, stored hashed). `audits`: records
 * of what led to it (an entry's redemption), written with the session's own in one statement.
 */
export async function createSession(
  ctx: DomainContext,
  session: SessionStart,
  audits: readonly AuditEntry[] = [],
): Promise<string> {
  const value = newToken();
  const now = ctx.now().toISOString();
  const row = {
    id_hash: hashToken(value),
    kind: session.kind,
    enterprise_id: session.enterpriseId,
    pal_id: session.palId,
    transaction_id: session.transactionId,
    sso_id: session.standingSso,
    role: session.role,
    profile: session.profile,
    csrf: newToken(),
    outcome: session.outcome
      ? JSON.stringify({ ...boundedOutcome(session.outcome), savedAt: now })
      : null,
    created_at: now,
    last_seen_at: now,
  };
  await inTransaction(ctx, async ({ db }) => {
    await insertBrowserSession(db, row);
    await recordAudits(ctx, db, [
      ...audits,
      {
        action: 'session.started',
        enterpriseId: session.enterpriseId,
        actor:
          session.kind === 'anonymous'
            ? { type: 'anonymous', id: null }
            : { type: 'sso', id: session.standingSso },
        target: session.transactionId
          ? { type: 'transaction', id: session.transactionId }
          : { type: 'pal', id: session.palId },
        details: { sessionRef: hashRef(row.id_hash), kind: session.kind, role: session.role },
      },
    ]);
    if (session.kind === 'mail' && session.transactionId !== null) {
      const older = await deleteOlderMailSessions(
        db,
        {
          enterpriseId: session.enterpriseId,
          transactionId: session.transactionId,
          ssoId: session.standingSso,
          started: row.id_hash,
        },
        MAIL_LINK_SESSIONS,
      );
      await recordSessionsEnded(ctx, db, older, 'superseded');
    }
  });
  return value;
}

/**
 * The outcome as a session keeps it: its first OUTCOME_MESSAGES_MAX messages (the service's own
 * failure, and a workflow's problems, come first), each cut to OUTCOME_MESSAGE_LENGTH, then a
 * line saying how many were left out. Applied once, where the outcome is stored, so the row and
 * every view of the page are bounded.
 */
export function boundedOutcome(outcome: ActionOutcome): ActionOutcome {
  const { messages } = outcome;
  const tooLong = (m: ActionOutcome['messages'][number]) =>
    m.message.length > OUTCOME_MESSAGE_LENGTH ||
    (typeof m.type === 'string' && m.type.length > OUTCOME_TYPE_LENGTH);
  if (messages.length <= OUTCOME_MESSAGES_MAX && !messages.some(tooLong)) return outcome;
  const kept = messages.slice(0, OUTCOME_MESSAGES_MAX).map((m) =>
    tooLong(m)
      ? {
          ...m,
          message: cut(m.message, OUTCOME_MESSAGE_LENGTH, 'message'),
          ...(typeof m.type === 'string' ? { type: wholeSlice(m.type, OUTCOME_TYPE_LENGTH) } : {}),
        }
      : m,
  );
  const more = messages.length - kept.length;
  if (more > 0)
    kept.push({
      message: `and ${COUNT.format(more)} more ${more === 1 ? 'message' : 'messages'}`,
      type: MORE_MESSAGES,
    });
  return { ...outcome, messages: kept };
}

function fromRow(row: BrowserSessionRow): BrowserSession {
  return sessionOf(
    {
      kind: row.kind,
      enterpriseId: row.enterprise_id,
      palId: row.pal_id,
      transactionId: row.transaction_id,
      standingSso: row.sso_id!,
      role: row.role,
      profile: row.profile,
      outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as ActionOutcome),
    },
    row.csrf,
  );
}

/**
 * The session a cookie value names, its idle time reset, once its person's standing is checked
 * again. A session whose standing is gone is ended here (`withdrawn`).
 */
export async function readSession(
  ctx: DomainContext,
  cookie: string | undefined,
): Promise<SessionRead> {
  if (cookie === undefined || !looksLikeToken(cookie)) return { state: 'none' };
  const now = ctx.now().getTime();
  const idHash = hashToken(cookie);
  const row = await touchBrowserSession(
    ctx.db,
    idHash,
    new Date(now).toISOString(),
    new Date(now - SESSION_IDLE_MS).toISOString(),
    new Date(now - SESSION_LIFETIME_MS).toISOString(),
  );
  if (!row) return { state: 'none' };
  const session = fromRow(row);
  const standing = await sessionStanding(ctx, basisOf(session));
  if (!standing.ok) {
    await inTransaction(ctx, async ({ db }) => {
      await deleteBrowserSession(db, idHash);
      await recordSessionsEnded(ctx, db, [row], 'withdrawn');
    });
    ctx.log.info(
      { enterpriseId: session.enterpriseId, kind: session.kind, reason: standing.reason },
      'browser session ended: its person may no longer act',
    );
    return { state: 'withdrawn', reason: standing.reason };
  }
  return { state: 'live', session: { ...session, role: standing.role }, cookie };
}

/**
 * The name a session's page address and cookie carry (`/{service_root}/session/{handle}`): the
 * reference its audit records give it, a prefix of the stored hash, so it says nothing of the
 * cookie's value. A browser holds a session per entry, each page at its own address.
 */
export function sessionHandle(cookie: string): string {
  return hashRef(hashToken(cookie));
}

/** What a handle looks like: 12 base64url characters. */
export const SESSION_HANDLE = /^[\w-]{12}$/;

/**
 * Of the session cookie values a browser sent, those whose sessions are live, the one last seen
 * first, with their CSRF tokens. Reads only: neither their idle time nor their person's standing
 * is touched (a session whose person may no longer act counts until a request of its own ends it).
 */
export async function liveSessionsOf(
  ctx: DomainContext,
  cookies: readonly string[],
): Promise<{ cookie: string; csrf: string }[]> {
  const byHash = new Map(cookies.filter(looksLikeToken).map((value) => [hashToken(value), value]));
  const now = ctx.now().getTime();
  const rows = await liveBrowserSessions(
    ctx.db,
    [...byHash.keys()],
    new Date(now - SESSION_IDLE_MS).toISOString(),
    new Date(now - SESSION_LIFETIME_MS).toISOString(),
  );
  return rows
    .sort((a, b) => b.last_seen_at.localeCompare(a.last_seen_at))
    .map((row) => ({ cookie: byHash.get(row.id_hash)!, csrf: row.csrf }));
}

/**
 * Keeps the outcome for the session's page, bounded (boundedOutcome); with `draft`, its files
 * become the files the session keeps for its next submission (an empty list: none), in the same
 * commit, and the person's other sessions on the transaction keep none.
 */
export async function saveOutcome(
  ctx: DomainContext,
  cookie: string,
  outcome: ActionOutcome,
  draft?: {
    files: readonly DraftFile[];
    session: Pick<BrowserSession, 'transactionId' | 'ssoId'>;
  },
): Promise<void> {
  const idHash = hashToken(cookie);
  const savedAt = ctx.now().toISOString();
  const kept = JSON.stringify({ ...boundedOutcome(outcome), savedAt });
  if (draft === undefined) {
    await setBrowserSessionOutcome(ctx.db, idHash, kept);
    return;
  }
  await inTransaction(ctx, async ({ db }) => {
    await setBrowserSessionOutcome(db, idHash, kept);
    await replaceSessionDraftFiles(
      db,
      idHash,
      draft.session,
      draft.files.map((f) => ({ ...f, saved_at: savedAt })),
    );
  });
}

/** The files the session keeps from its last form that did not go through. */
export async function draftFilesOf(ctx: DomainContext, cookie: string): Promise<KeptFile[]> {
  const rows = await readSessionDraftFiles(ctx.db, hashToken(cookie));
  return rows.map(({ saved_at, ...file }) => ({ ...file, savedAt: saved_at }));
}

/** The form's CSRF token is the session's, compared in constant time. */
export function csrfMatches(session: Pick<BrowserSession, 'csrf'>, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  // Bytes, not characters: `timingSafeEqual` throws on buffers of different lengths.
  const a = Buffer.from(given);
  const b = Buffer.from(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Removes ended sessions (idle, or past their lifetime); how many. */
export async function sweepSessions(ctx: DomainContext): Promise<number> {
  const now = ctx.now().getTime();
  const seenBefore = new Date(now - SESSION_IDLE_MS).toISOString();
  const startedBefore = new Date(now - SESSION_LIFETIME_MS).toISOString();
  return inSweepBatches((limit) =>
    inTransaction(ctx, async ({ db }) => {
      const ended = await deleteEndedBrowserSessions(db, seenBefore, startedBefore, limit);
      await recordSessionsEnded(
        ctx,
        db,
        ended.filter((s) => s.created_at > startedBefore),
        'idle',
      );
      await recordSessionsEnded(
        ctx,
        db,
        ended.filter((s) => s.created_at <= startedBefore),
        'lifetime',
      );
      return ended.length;
    }),
  );
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
