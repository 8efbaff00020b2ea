// Whether the person behind a browser session may still act (docs/entry.md, "What a session rests
// on"). Checked when a token or a mailed link starts a session and on every request of it, so that
// deleting the SSO (E2), removing its roles (T4, T7) or its console grant (C4), or archiving the
// transaction ends the sessions they gave at their next request, on every node.
import type { ConsoleProfile, SessionKind, TransactionRow } from '../storage/schema.js';
import { findSso, type SsoRecord } from '../storage/ssos.js';
import { listTransactionRoles } from '../storage/transaction-roles.js';
import { findTransactionRow } from '../storage/transactions.js';
import { hasConsoleAccess } from './console-access.js';
import type { DomainContext } from './context.js';
import { isAccessible } from './transaction-lifecycle.js';

/** What a session rests on. */
export interface SessionBasis {
  kind: SessionKind;
  enterpriseId: string;
  palId: string;
  /** Null for console sessions. */
  transactionId: string | null;
  /** The SSO whose standing counts: the person, or for an anonymous session the T8 token's SSO. */
  standingSso: string;
  /** The role the session showed so far (null: none). */
  role: string | null;
  /** Console sessions: the profile of the grant (C3) the session rests on. */
  profile: ConsoleProfile | null;
}

/** The session may go on, showing `role`; or it may not, and `reason` says why to the person. */
export type Standing = { ok: true; role: string | null } | { ok: false; reason: string };

export const WITHDRAWN = {
  person: 'You can no longer act for this enterprise.',
  grant: 'Your access to this pal was removed.',
  role: 'Your role on this transaction was removed.',
  /** An anonymous visitor is not the SSO whose standing ended: one neutral sentence for them. */
  link: 'This link was withdrawn.',
  archived: 'This transaction is archived.',
  missing: 'This transaction no longer exists.',
} as const;

const withdrawn = (reason: string): Standing => ({ ok: false, reason });

/**
 * The SSO and the transaction a transaction session rests on, as read once by an entry, which
 * judges them before it gives the role (domain/transaction-roles.ts assignRole) and again for the
 * session's standing, in one database transaction.
 */
export interface StandingFacts {
  sso: SsoRecord | undefined;
  transaction: TransactionRow | undefined;
}

/** Reads the facts of a transaction session's standing (see StandingFacts). */
export async function readStandingFacts(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId: string,
): Promise<StandingFacts> {
  const transaction = await findTransactionRow(ctx.db, enterpriseId, transactionId);
  const sso = await findSso(ctx.db, enterpriseId, ssoId);
  return { sso, transaction };
}

/**
 * What an entry to a transaction judges before it gives its role: the SSO is ACTIVE, the
 * transaction exists and is not ARCHIVED (sessionStanding judges the same, and the role, after).
 */
export function standingBeforeRole(facts: StandingFacts, anonymous: boolean): Standing {
  if (facts.sso?.status !== 'ACTIVE')
    return withdrawn(anonymous ? WITHDRAWN.link : WITHDRAWN.person);
  if (!facts.transaction) return withdrawn(WITHDRAWN.missing);
  if (!isAccessible(facts.transaction.system_status)) return withdrawn(WITHDRAWN.archived);
  return { ok: true, role: null };
}

/**
 * Console sessions: the SSO is ACTIVE and holds the console grant of the pal under the profile.
 * Transaction sessions: the SSO is ACTIVE, the transaction exists and is not ARCHIVED, and the SSO
 * holds a role on it; a mailed link's session needs no role (the workflow chose its recipient).
 * `facts`: the SSO and transaction as the caller read them in its database transaction.
 */
export async function sessionStanding(
  ctx: DomainContext,
  basis: SessionBasis,
  facts?: StandingFacts,
): Promise<Standing> {
  const anonymous = basis.kind === 'anonymous';
  const sso = facts ? facts.sso : await findSso(ctx.db, basis.enterpriseId, basis.standingSso);
  if (sso?.status !== 'ACTIVE') return withdrawn(anonymous ? WITHDRAWN.link : WITHDRAWN.person);

  if (basis.transactionId === null) {
    const granted =
      basis.profile !== null &&
      (await hasConsoleAccess(
        ctx,
        basis.enterpriseId,
        basis.palId,
        sso.id,
        basis.profile === 'enterprise',
      ));
    return granted ? { ok: true, role: null } : withdrawn(WITHDRAWN.grant);
  }

  const transaction = facts
    ? facts.transaction
    : await findTransactionRow(ctx.db, basis.enterpriseId, basis.transactionId);
  if (!transaction) return withdrawn(WITHDRAWN.missing);
  if (!isAccessible(transaction.system_status)) return withdrawn(WITHDRAWN.archived);
  const roles = (await listTransactionRoles(ctx.db, transaction.id, sso.id)).map((r) => r.role);
  // The role shown: the one the session had while the SSO still holds it (a workflow may have
  // given another meanwhile).
  const shown = basis.role !== null && roles.includes(basis.role) ? basis.role : (roles[0] ?? null);
  if (basis.kind === 'mail') return { ok: true, role: shown };
  if (roles.length === 0) return withdrawn(anonymous ? WITHDRAWN.link : WITHDRAWN.role);
  return { ok: true, role: anonymous ? 'anonymous' : shown };
}
