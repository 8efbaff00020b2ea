// People: global accounts (one per e-mail address, whatever its case) and the SSOs that tie an
// account to an enterprise (E1–E6); invitations by mail (E3) and their scanner-safe link; console
// access grants (C3, C4); roles on transactions (T4, T7).
//
// SSO status: ACTIVE (E1, or an accepted invitation), PENDING_ACTIVATION (E3, until the link is
// confirmed), DELETED (E2; final). Every function is scoped by the caller's enterprise: an SSO,
// pal or transaction of another enterprise is NotFound, exactly like a missing one.
import { sql } from 'kysely';
import { escapeHtml } from '../html.js';
import { dialectOf } from '../storage/dialect-of.js';
import type { SsoStatus } from '../storage/schema.js';
import type { DomainContext } from './context.js';
import { getEnterprise } from './enterprises.js';
import {
  ConflictError,
  GoneError,
  InvalidArgumentError,
  MailDeliveryError,
  NotFoundError,
} from './errors.js';
import { hashToken, looksLikeToken, newToken, randomId } from './ids.js';
import { emailKey, requireEmail, requireId, requireText } from './validate.js';

/** How long an invitation link works. */
export const INVITATION_TTL_DAYS = 7;
const ROLE_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export interface PersonInput {
  firstName: string;
  lastName: string;
  email: string;
}

export interface SsoInfo {
  id: string;
  enterpriseId: string;
  status: SsoStatus;
  accountId: string;
  email: string;
  firstName: string;
  lastName: string;
  createdAt: string;
  updatedAt: string;
}

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

function person(input: PersonInput): PersonInput {
  return {
    firstName: requireText('firstName', input.firstName),
    lastName: requireText('lastName', input.lastName),
    email: requireEmail('email', input.email),
  };
}

async function ssoInfo(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
  field = 'sso',
): Promise<SsoInfo> {
  const row = await ctx.db
    .selectFrom('ssos')
    .innerJoin('accounts', 'accounts.id', 'ssos.account_id')
    .select([
      'ssos.id',
      'ssos.enterprise_id',
      'ssos.status',
      'ssos.account_id',
      'accounts.email',
      'accounts.first_name',
      'accounts.last_name',
      'ssos.created_at',
      'ssos.updated_at',
    ])
    .where('ssos.id', '=', requireId(field, ssoId))
    .where('ssos.enterprise_id', '=', enterpriseId)
    .executeTakeFirst();
  if (!row) throw NotFoundError.of('SSO', ssoId);
  return {
    id: row.id,
    enterpriseId: row.enterprise_id,
    status: row.status,
    accountId: row.account_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** An SSO of the enterprise that is not DELETED (404 / 409 otherwise). */
async function liveSso(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
  field = 'sso',
): Promise<SsoInfo> {
  const sso = await ssoInfo(ctx, enterpriseId, ssoId, field);
  if (sso.status === 'DELETED') throw new ConflictError(`SSO "${ssoId}" is deleted`);
  return sso;
}

/** An SSO of the enterprise. 404 when the enterprise has no such SSO. */
export async function getSso(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
): Promise<SsoInfo> {
  return ssoInfo(ctx, enterpriseId, ssoId);
}

/**
 * E1: creates the account for this e-mail address and an ACTIVE SSO for the enterprise; returns
 * the SSO id. 409 when the address is already registered (by anyone, in any enterprise).
 */
export async function createSso(
  ctx: DomainContext,
  enterpriseId: string,
  input: PersonInput,
): Promise<string> {
  const { firstName, lastName, email } = person(input);
  await getEnterprise(ctx, enterpriseId);
  const now = ctx.now().toISOString();
  return ctx.db.transaction().execute(async (trx) => {
    const accountId = randomId();
    const inserted = await trx
      .insertInto('accounts')
      .values({
        id: accountId,
        email,
        email_key: emailKey(email),
        first_name: firstName,
        last_name: lastName,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('email_key').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
      throw new ConflictError(`email: "${email}" is already registered`);
    }
    const ssoId = randomId();
    await trx
      .insertInto('ssos')
      .values({
        id: ssoId,
        enterprise_id: enterpriseId,
        account_id: accountId,
        status: 'ACTIVE',
        created_at: now,
        updated_at: now,
      })
      .execute();
    return ssoId;
  });
}

/** E2: marks the SSO DELETED (for good); true. Deleting a deleted SSO is true again. */
export async function deleteSso(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
): Promise<boolean> {
  await ssoInfo(ctx, enterpriseId, ssoId);
  await ctx.db
    .updateTable('ssos')
    .set({ status: 'DELETED', updated_at: ctx.now().toISOString() })
    .where('id', '=', ssoId)
    .where('enterprise_id', '=', enterpriseId)
    .where('status', '<>', 'DELETED')
    .execute();
  return true;
}

/** E4: whether an account has this e-mail address (in any case). */
export async function isEmailRegistered(ctx: DomainContext, email: string): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('accounts')
    .select('id')
    .where('email_key', '=', emailKey(requireEmail('email', email)))
    .executeTakeFirst();
  return row !== undefined;
}

/** E5: ACTIVE, PENDING_ACTIVATION or DELETED. 404 when the enterprise has no such SSO. */
export async function getSsoStatus(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
): Promise<SsoStatus> {
  return (await ssoInfo(ctx, enterpriseId, ssoId)).status;
}

/**
 * E6: updates the account behind the SSO (names and e-mail address); true. 404: no such SSO in
 * the enterprise; 409: the SSO is deleted, or the address belongs to another account.
 */
export async function updateSso(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
  input: PersonInput,
): Promise<boolean> {
  const { firstName, lastName, email } = person(input);
  const sso = await liveSso(ctx, enterpriseId, ssoId);
  const taken = () =>
    new ConflictError(`email: "${email}" is already registered to another account`);
  const owner = await ctx.db
    .selectFrom('accounts')
    .select('id')
    .where('email_key', '=', emailKey(email))
    .executeTakeFirst();
  if (owner && owner.id !== sso.accountId) throw taken();
  try {
    await ctx.db
      .updateTable('accounts')
      .set({
        first_name: firstName,
        last_name: lastName,
        email,
        email_key: emailKey(email),
        updated_at: ctx.now().toISOString(),
      })
      .where('id', '=', sso.accountId)
      .execute();
  } catch (error) {
    // Someone took the address between the check and the update.
    if (dialectOf(ctx.db).isUniqueViolation(error)) throw taken();
    throw error;
  }
  return true;
}

/** The link of an invitation mail (its GET shows a confirm page; the POST accepts). */
export function invitationLink(ctx: DomainContext, token: string): string {
  return `${ctx.config.publicUrl}/${ctx.config.serviceRoot}/invitations/${token}`;
}

/**
 * E3: invites a registered person to the enterprise. Creates a PENDING_ACTIVATION SSO (or reuses
 * the pending one, sending a new link) and mails a single-use link to the account's address;
 * returns the SSO id. 404: no account has this address; 409: the person already has an ACTIVE SSO
 * in the enterprise. When the mail cannot be sent, nothing is kept and the error is thrown.
 */
export async function inviteSso(
  ctx: DomainContext,
  enterpriseId: string,
  email: string,
): Promise<string> {
  const address = requireEmail('email', email);
  const enterprise = await getEnterprise(ctx, enterpriseId);
  const account = await ctx.db
    .selectFrom('accounts')
    .selectAll()
    .where('email_key', '=', emailKey(address))
    .executeTakeFirst();
  if (!account) throw new NotFoundError(`email: no account is registered for "${address}"`);

  const token = newToken();
  const created = ctx.now();
  const expiresAt = new Date(created.getTime() + INVITATION_TTL_DAYS * 86_400_000).toISOString();
  const { ssoId, invitationId, newSso } = await ctx.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('ssos')
      .select(['id', 'status'])
      .where('enterprise_id', '=', enterpriseId)
      .where('account_id', '=', account.id)
      .where('status', '<>', 'DELETED')
      .executeTakeFirst();
    if (existing?.status === 'ACTIVE') {
      throw new ConflictError(`email: "${address}" already has an active SSO in this enterprise`);
    }
    const ssoId = existing?.id ?? randomId();
    if (!existing) {
      await trx
        .insertInto('ssos')
        .values({
          id: ssoId,
          enterprise_id: enterpriseId,
          account_id: account.id,
          status: 'PENDING_ACTIVATION',
          created_at: created.toISOString(),
          updated_at: created.toISOString(),
        })
        .execute();
    }
    const invitationId = randomId();
    await trx
      .insertInto('invitations')
      .values({
        id: invitationId,
        token_hash: hashToken(token),
        enterprise_id: enterpriseId,
        sso_id: ssoId,
        email: account.email,
        created_at: created.toISOString(),
        expires_at: expiresAt,
        used_at: null,
      })
      .execute();
    return { ssoId, invitationId, newSso: !existing };
  });

  try {
    await ctx.mailer.send(
      invitationMail({
        to: account.email,
        firstName: account.first_name,
        lastName: account.last_name,
        enterpriseName: enterprise.name,
        link: invitationLink(ctx, token),
        expiresAt,
      }),
    );
  } catch (error) {
    // Undo, so that E3 can simply be called again.
    if (newSso) await ctx.db.deleteFrom('ssos').where('id', '=', ssoId).execute();
    else await ctx.db.deleteFrom('invitations').where('id', '=', invitationId).execute();
    ctx.log.error({ err: error, enterpriseId }, 'invitation mail could not be sent');
    throw new MailDeliveryError();
  }
  return ssoId;
}

export function invitationMail(m: {
  to: string;
  firstName: string;
  lastName: string;
  enterpriseName: string;
  link: string;
  expiresAt: string;
}) {
  const expires = `${m.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
  const text = [
    `Hello ${m.firstName} ${m.lastName},`,
    '',
    `${m.enterpriseName} invites you to use its Pal Workflow applications with this address.`,
    'Open the link below and confirm to accept the invitation:',
    '',
    m.link,
    '',
    `The link works once and until ${expires}.`,
    'If you did not expect this invitation, ignore this mail.',
  ].join('\n');
  const html = [
    `<p>Hello ${escapeHtml(m.firstName)} ${escapeHtml(m.lastName)},</p>`,
    `<p>${escapeHtml(m.enterpriseName)} invites you to use its Pal Workflow applications with this address.</p>`,
    `<p><a href="${escapeHtml(m.link)}">Open the invitation</a> and confirm to accept it.</p>`,
    `<p>The link works once and until ${escapeHtml(expires)}. If you did not expect this invitation, ignore this mail.</p>`,
  ].join('\n');
  return { to: m.to, subject: `Invitation from ${m.enterpriseName}`, text, html };
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
  const row = await ctx.db
    .selectFrom('invitations')
    .innerJoin('ssos', 'ssos.id', 'invitations.sso_id')
    .innerJoin('accounts', 'accounts.id', 'ssos.account_id')
    .innerJoin('enterprises', 'enterprises.id', 'invitations.enterprise_id')
    .select([
      'enterprises.name as enterpriseName',
      'accounts.email',
      'accounts.first_name',
      'accounts.last_name',
      'invitations.expires_at',
      'invitations.used_at',
      'ssos.status',
    ])
    .where('invitations.token_hash', '=', hashToken(token))
    .executeTakeFirst();
  const now = ctx.now().toISOString();
  if (
    !row ||
    row.used_at !== null ||
    row.expires_at <= now ||
    row.status !== 'PENDING_ACTIVATION'
  ) {
    throw new GoneError();
  }
  return {
    enterpriseName: row.enterpriseName,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    expiresAt: row.expires_at,
  };
}

/**
 * For the POST of the confirm page: consumes the token and turns the SSO ACTIVE. The token is
 * consumed by one conditional UPDATE, so of concurrent confirmations exactly one wins; the
 * others, and every later one, get 410 (GoneError), as do unknown and expired tokens.
 */
export async function acceptInvitation(
  ctx: DomainContext,
  token: string,
): Promise<AcceptedInvitation> {
  if (!looksLikeToken(token)) throw new GoneError();
  const hash = hashToken(token);
  const now = ctx.now().toISOString();
  return ctx.db.transaction().execute(async (trx) => {
    const consumed = await trx
      .updateTable('invitations')
      .set({ used_at: now })
      .where('token_hash', '=', hash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('ssos')
            .select(sql.lit(1).as('one'))
            .whereRef('ssos.id', '=', 'invitations.sso_id')
            .where('ssos.status', '=', 'PENDING_ACTIVATION'),
        ),
      )
      .executeTakeFirst();
    if (consumed.numUpdatedRows !== 1n) throw new GoneError();
    const invitation = await trx
      .selectFrom('invitations')
      .innerJoin('enterprises', 'enterprises.id', 'invitations.enterprise_id')
      .select([
        'invitations.sso_id',
        'invitations.enterprise_id',
        'invitations.email',
        'enterprises.name',
      ])
      .where('invitations.token_hash', '=', hash)
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('ssos')
      .set({ status: 'ACTIVE', updated_at: now })
      .where('id', '=', invitation.sso_id)
      .where('status', '=', 'PENDING_ACTIVATION')
      .execute();
    ctx.log.info(
      { enterpriseId: invitation.enterprise_id, ssoId: invitation.sso_id },
      'invitation accepted',
    );
    return {
      ssoId: invitation.sso_id,
      enterpriseId: invitation.enterprise_id,
      enterpriseName: invitation.name,
      email: invitation.email,
    };
  });
}

// ---- console access (C3, C4) ----

async function consolePal(ctx: DomainContext, enterpriseId: string, palId: string): Promise<void> {
  const pal = await ctx.db
    .selectFrom('pals')
    .select('mode_console')
    .where('enterprise_id', '=', enterpriseId)
    .where('id', '=', requireId('palId', palId))
    .executeTakeFirst();
  if (!pal) throw NotFoundError.of('pal', palId);
  if (pal.mode_console !== 1)
    throw new InvalidArgumentError(`palId: pal "${palId}" is not a console-mode pal`);
}

const profileOf = (useEnterpriseProfile: boolean) =>
  useEnterpriseProfile ? 'enterprise' : 'personal';

/**
 * C3: grants the SSO access to the console pal under the enterprise profile (true) or the
 * person's own (false); true when the grant exists afterwards. 404: no such console pal or SSO in
 * the enterprise; 400: not a console-mode pal; 409: the SSO is deleted.
 */
export async function grantConsoleAccess(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  ssoId: string,
  useEnterpriseProfile: boolean,
): Promise<boolean> {
  await consolePal(ctx, enterpriseId, palId);
  await liveSso(ctx, enterpriseId, ssoId, 'ssoId');
  await ctx.db
    .insertInto('console_grants')
    .values({
      enterprise_id: enterpriseId,
      pal_id: palId,
      sso_id: ssoId,
      profile: profileOf(useEnterpriseProfile),
      created_at: ctx.now().toISOString(),
    })
    .onConflict((oc) => oc.columns(['enterprise_id', 'pal_id', 'sso_id', 'profile']).doNothing())
    .execute();
  return true;
}

/** C4: removes that grant; true when one was removed, false when there was none. 404/400 as C3. */
export async function deleteConsoleAccess(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  ssoId: string,
  useEnterpriseProfile: boolean,
): Promise<boolean> {
  await consolePal(ctx, enterpriseId, palId);
  await ssoInfo(ctx, enterpriseId, ssoId, 'ssoId');
  const result = await ctx.db
    .deleteFrom('console_grants')
    .where('enterprise_id', '=', enterpriseId)
    .where('pal_id', '=', palId)
    .where('sso_id', '=', ssoId)
    .where('profile', '=', profileOf(useEnterpriseProfile))
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Whether the SSO may use the console pal under that profile. */
export async function hasConsoleAccess(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  ssoId: string,
  useEnterpriseProfile: boolean,
): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('console_grants')
    .innerJoin('ssos', 'ssos.id', 'console_grants.sso_id')
    .select('console_grants.sso_id')
    .where('console_grants.enterprise_id', '=', enterpriseId)
    .where('console_grants.pal_id', '=', palId)
    .where('console_grants.sso_id', '=', ssoId)
    .where('console_grants.profile', '=', profileOf(useEnterpriseProfile))
    .where('ssos.status', '<>', 'DELETED')
    .executeTakeFirst();
  return row !== undefined;
}

// ---- roles on transactions (T4, T7, entries and workflows) ----

async function requireTransaction(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
): Promise<void> {
  const row = await ctx.db
    .selectFrom('transactions')
    .select('id')
    .where('id', '=', requireId('transactionId', transactionId))
    .where('enterprise_id', '=', enterpriseId)
    .executeTakeFirst();
  if (!row) throw NotFoundError.of('transaction', transactionId);
}

/**
 * Gives the SSO a role on the transaction (participant, anonymous, owner, or a workflow's own);
 * true when it is new, false when the SSO held it already. 404: no such transaction or SSO in the
 * enterprise; 409: the SSO is deleted; 400: a role name that is not 1 to 64 letters, digits, . _ -.
 */
export async function assignRole(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId: string,
  role: string,
): Promise<boolean> {
  if (typeof role !== 'string' || !ROLE_PATTERN.test(role)) {
    throw new InvalidArgumentError(
      'role: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter',
    );
  }
  await requireTransaction(ctx, enterpriseId, transactionId);
  await liveSso(ctx, enterpriseId, ssoId, 'userSSO');
  const result = await ctx.db
    .insertInto('transaction_roles')
    .values({
      transaction_id: transactionId,
      sso_id: ssoId,
      role,
      enterprise_id: enterpriseId,
      created_at: ctx.now().toISOString(),
    })
    .onConflict((oc) => oc.columns(['transaction_id', 'sso_id', 'role']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** The roles held on a transaction, optionally of one SSO, ordered by SSO and role. */
export async function listRoles(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId?: string,
): Promise<{ ssoId: string; role: string }[]> {
  await requireTransaction(ctx, enterpriseId, transactionId);
  const rows = await ctx.db
    .selectFrom('transaction_roles')
    .select(['sso_id', 'role'])
    .where('transaction_id', '=', transactionId)
    .$if(ssoId !== undefined, (q) => q.where('sso_id', '=', ssoId!))
    .orderBy('sso_id')
    .orderBy('role')
    .execute();
  return rows.map((r) => ({ ssoId: r.sso_id, role: r.role }));
}

/** T7: removes every role of the SSO on the transaction; how many. 404: either not in the enterprise. */
export async function removeRole(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId: string,
): Promise<number> {
  await requireTransaction(ctx, enterpriseId, transactionId);
  await ssoInfo(ctx, enterpriseId, ssoId, 'userSSO');
  const result = await ctx.db
    .deleteFrom('transaction_roles')
    .where('transaction_id', '=', transactionId)
    .where('sso_id', '=', ssoId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** T4: removes every role of the SSO on the enterprise's transactions; how many. 404: no such SSO. */
export async function removeAllRoles(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
): Promise<number> {
  await ssoInfo(ctx, enterpriseId, ssoId, 'userSSO');
  const result = await ctx.db
    .deleteFrom('transaction_roles')
    .where('enterprise_id', '=', enterpriseId)
    .where('sso_id', '=', ssoId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
