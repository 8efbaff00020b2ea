// E3: invitations by mail to join an enterprise, and their scanner-safe link: its GET only shows
// a confirm page (describeInvitation), the POST of that page accepts (acceptInvitation).
import { invitationMail } from '../mail/invitation-mail.js';
import {
  consumeInvitation,
  findInvitationByTokenHash,
  insertInvitation,
  lastInvitationAt,
} from '../storage/invitations.js';
import {
  activatePendingSso,
  findAccountByEmailKey,
  findLiveSsoOfAccount,
  insertSso,
  lockAccount,
} from '../storage/ssos.js';
import { recordAudit } from './audit.js';
import type { DomainContext } from './context.js';
import { getEnterprise } from './enterprises.js';
import { ConflictError, GoneError, NotFoundError } from './errors.js';
import { emitEvent } from './events.js';
import { hashToken, looksLikeToken, newToken, randomId } from './ids.js';
import { queueMail } from './queued-mail.js';
import { emailKey, requireEmail } from './validate.js';

/** How long an invitation link works. */
export const INVITATION_TTL_DAYS = 7;
/** E3 mails one SSO at most once in this long (a repeated E3 answers the same and mails nothing). */
export const INVITATION_MAIL_INTERVAL_MS = 60 * 60_000;

/** What the invitation page shows before the person confirms. */
export interface InvitationView {
  enterpriseName: string;
  email: string;
  firstName: string;
  lastName: string;
  expiresAt: string;
}

export interface AcceptedInvitation {
  ssoId: string;
  enterpriseId: string;
  enterpriseName: string;
  email: string;
}

/** The link of an invitation mail (its GET shows a confirm page; the POST accepts). */
export function invitationLink(ctx: DomainContext, token: string): string {
  return `${ctx.config.publicUrl}/${ctx.config.serviceRoot}/invitations/${token}`;
}

/**
 * E3: invites a registered person to the enterprise. Creates a PENDING_ACTIVATION SSO (or reuses
 * the pending one, sending a new link) and mails a single-use link to the account's address;
 * returns the SSO id. 404: no account has this address; 409: the person already has an ACTIVE SSO
 * in the enterprise. An SSO is mailed at most once per INVITATION_MAIL_INTERVAL_MS: a repeated E3
 * within it answers the same SSO id and mails nothing (so E3 cannot be used to flood a person's
 * mailbox). The mail is written to the outbox with the invitation and sent after commit, retried
 * while the mail server is away (docs/events.md).
 *
 * The work happens under the account's row lock (storage/ssos.ts lockAccount), which E6 takes
 * too: E3s of one person run one after the other on any number of nodes, so two cannot both mail
 * or both add an SSO, and an E6 of another enterprise either sees this SSO or has moved the
 * address first (then 404 here).
 */
export async function inviteSso(
  ctx: DomainContext,
  enterpriseId: string,
  email: string,
): Promise<string> {
  const address = requireEmail('email', email);
  const enterprise = await getEnterprise(ctx, enterpriseId);
  const key = emailKey(address);
  const unknown = () => new NotFoundError(`email: no account is registered for "${address}"`);
  const found = await findAccountByEmailKey(ctx.db, key);
  if (!found) throw unknown();

  const token = newToken();
  const created = ctx.now();
  const expiresAt = new Date(created.getTime() + INVITATION_TTL_DAYS * 86_400_000).toISOString();
  return ctx.db.transaction().execute(async (trx) => {
    const dbTx: DomainContext = { ...ctx, db: trx };
    // Undefined when E6 moved the account to another address since it was found.
    const account = await lockAccount(trx, found.id, key);
    if (!account) throw unknown();
    const existing = await findLiveSsoOfAccount(trx, enterpriseId, account.id);
    if (existing?.status === 'ACTIVE') {
      throw new ConflictError(`email: "${address}" already has an active SSO in this enterprise`);
    }
    if (existing) {
      const last = await lastInvitationAt(trx, existing.id);
      const since = created.getTime() - INVITATION_MAIL_INTERVAL_MS;
      if (last !== undefined && Date.parse(last) > since) return existing.id;
    }
    const ssoId = existing?.id ?? randomId();
    if (!existing) {
      await insertSso(trx, {
        id: ssoId,
        enterpriseId,
        accountId: account.id,
        status: 'PENDING_ACTIVATION',
        now: created.toISOString(),
      });
      await emitEvent(dbTx, enterpriseId, 'sso.created', {
        sso: ssoId,
        status: 'PENDING_ACTIVATION',
      });
    }
    await insertInvitation(trx, {
      id: randomId(),
      tokenHash: hashToken(token),
      enterpriseId,
      ssoId,
      email: account.email,
      createdAt: created.toISOString(),
      expiresAt,
    });
    await queueMail(
      dbTx,
      enterpriseId,
      invitationMail({
        to: account.email,
        firstName: account.first_name,
        lastName: account.last_name,
        enterpriseName: enterprise.name,
        link: invitationLink(ctx, token),
        expiresAt,
      }),
    );
    await recordAudit(ctx, trx, {
      action: 'sso.invited',
      enterpriseId,
      target: { type: 'sso', id: ssoId },
      details: { newSso: !existing },
    });
    return ssoId;
  });
}

/**
 * For the GET of an invitation link: what the confirm page shows. Changes nothing.
 * 410 (GoneError) when the token is unknown, used or expired, or the SSO is no longer pending.
 */
export async function describeInvitation(
  ctx: DomainContext,
  token: string,
): Promise<InvitationView> {
  if (!looksLikeToken(token)) throw new GoneError();
  const found = await findInvitationByTokenHash(ctx.db, hashToken(token));
  const now = ctx.now().toISOString();
  if (
    !found ||
    found.usedAt !== null ||
    found.expiresAt <= now ||
    found.ssoStatus !== 'PENDING_ACTIVATION'
  ) {
    throw new GoneError();
  }
  const { enterpriseName, email, firstName, lastName, expiresAt } = found;
  return { enterpriseName, email, firstName, lastName, expiresAt };
}

/**
 * For the POST of the confirm page: consumes the token and turns the SSO ACTIVE. Of concurrent
 * confirmations exactly one wins (storage/invitations.ts); the others, and every later one, get
 * 410 (GoneError), as do unknown and expired tokens.
 */
export async function acceptInvitation(
  ctx: DomainContext,
  token: string,
): Promise<AcceptedInvitation> {
  if (!looksLikeToken(token)) throw new GoneError();
  const now = ctx.now().toISOString();
  return ctx.db.transaction().execute(async (trx) => {
    const invitation = await consumeInvitation(trx, hashToken(token), now);
    if (!invitation) throw new GoneError();
    await activatePendingSso(trx, invitation.ssoId, now);
    await recordAudit(ctx, trx, {
      action: 'sso.activated',
      enterpriseId: invitation.enterpriseId,
      actor: { type: 'sso', id: invitation.ssoId },
      target: { type: 'sso', id: invitation.ssoId },
    });
    await emitEvent({ ...ctx, db: trx }, invitation.enterpriseId, 'sso.activated', {
      sso: invitation.ssoId,
    });
    ctx.log.info(
      { enterpriseId: invitation.enterpriseId, ssoId: invitation.ssoId },
      'invitation accepted',
    );
    return invitation;
  });
}
