// People: global accounts (one per e-mail address, whatever its case) and the SSOs that tie an
// account to an enterprise (E1, E2, E4–E6; E3's invitations are ./invitations.ts).
//
// SSO status: ACTIVE (E1, or an accepted invitation), PENDING_ACTIVATION (E3, until the link is
// confirmed), DELETED (E2; final). Every function is scoped by the caller's enterprise: an SSO of
// another enterprise is NotFound, exactly like a missing one.
import type { SsoStatus } from '../storage/schema.js';
import {
  findAccountByEmailKey,
  findSso,
  insertAccount,
  insertSso,
  isAccountHeldElsewhere,
  lockAccount,
  markSsoDeleted,
  updateAccount,
  type SsoRecord,
} from '../storage/ssos.js';
import { recordAudit } from './audit.js';
import type { DomainContext } from './context.js';
import { getEnterprise } from './enterprises.js';
import { ConflictError, NotFoundError } from './errors.js';
import { emitEvent } from './events.js';
import { randomId } from './ids.js';
import { inTransaction } from './transact.js';
import { emailKey, requireEmail, requireId, requireText } from './validate.js';

/** Where a guest's made-up address is (P3 with userSSO=auto): no mail goes there. */
export const GUEST_DOMAIN = '@guest.invalid';

/**
 * A guest SSO (P3 with userSSO=auto) is known by nothing but a made-up name and address: a page
 * treats its person as anonymous (they type the name they sign with), and a run gets no
 * `input.person`.
 */
export function isGuest(sso: { email: string }): boolean {
  return sso.email.endsWith(GUEST_DOMAIN);
}

export interface PersonInput {
  firstName: string;
  lastName: string;
  email: string;
}

export type SsoInfo = SsoRecord;

function person(input: PersonInput): PersonInput {
  return {
    firstName: requireText('firstName', input.firstName),
    lastName: requireText('lastName', input.lastName),
    email: requireEmail('email', input.email),
  };
}

/**
 * An SSO of the enterprise. 404 when the enterprise has no such SSO. `parameter` is the name the
 * caller gave the id, for the 400 that names it.
 */
export async function getSso(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
  parameter = 'sso',
): Promise<SsoInfo> {
  const sso = await findSso(ctx.db, enterpriseId, requireId(parameter, ssoId));
  if (!sso) throw NotFoundError.of('SSO', ssoId);
  return sso;
}

/** An SSO of the enterprise that is not DELETED (404 / 409 otherwise). */
export async function getLiveSso(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
  parameter = 'sso',
): Promise<SsoInfo> {
  const sso = await getSso(ctx, enterpriseId, ssoId, parameter);
  return requireLive(sso, ssoId);
}

/** getLiveSso's judgement of an SSO already read (undefined: none of the enterprise). */
export function requireLive(sso: SsoInfo | undefined, ssoId: string): SsoInfo {
  if (!sso) throw NotFoundError.of('SSO', ssoId);
  if (sso.status === 'DELETED') throw new ConflictError(`SSO "${ssoId}" is deleted`);
  return sso;
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
  return inTransaction(ctx, async ({ db: trx }) => {
    const accountId = randomId();
    const fields = { firstName, lastName, email, emailKey: emailKey(email) };
    if (!(await insertAccount(trx, { ...fields, id: accountId, now }))) {
      throw new ConflictError(`email: "${email}" is already registered`);
    }
    const ssoId = randomId();
    await insertSso(trx, { id: ssoId, enterpriseId, accountId, status: 'ACTIVE', now });
    await recordAudit(ctx, trx, {
      action: 'sso.created',
      enterpriseId,
      target: { type: 'sso', id: ssoId },
    });
    await emitEvent({ ...ctx, db: trx }, enterpriseId, 'sso.created', {
      sso: ssoId,
      status: 'ACTIVE',
    });
    return ssoId;
  });
}

/** E2: marks the SSO DELETED (for good); true. Deleting a deleted SSO is true again. */
export async function deleteSso(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
): Promise<boolean> {
  await getSso(ctx, enterpriseId, ssoId);
  await inTransaction(ctx, async (dbTx) => {
    if (await markSsoDeleted(dbTx.db, enterpriseId, ssoId, ctx.now().toISOString())) {
      await emitEvent(dbTx, enterpriseId, 'sso.deleted', { sso: ssoId });
      await recordAudit(ctx, dbTx.db, {
        action: 'sso.deleted',
        enterpriseId,
        target: { type: 'sso', id: ssoId },
      });
    }
  });
  return true;
}

/** E4: whether an account has this e-mail address (in any case). */
export async function isEmailRegistered(ctx: DomainContext, email: string): Promise<boolean> {
  const key = emailKey(requireEmail('email', email));
  return (await findAccountByEmailKey(ctx.db, key)) !== undefined;
}

/** E5: ACTIVE, PENDING_ACTIVATION or DELETED. 404 when the enterprise has no such SSO. */
export async function getSsoStatus(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
): Promise<SsoStatus> {
  return (await getSso(ctx, enterpriseId, ssoId)).status;
}

/**
 * E6: updates the account behind the SSO (names and e-mail address); true. 404: no such SSO in
 * the enterprise; 409: the SSO is deleted, another enterprise holds an SSO of the account (one
 * tenant never rewrites the identity another relies on; a DELETED SSO does not count), the SSO is
 * an invitation not yet accepted, or the address belongs to another account. The check and the update are one database transaction under
 * the account's row lock, which E3 takes too before it adds an SSO: on any number of nodes, an
 * invitation of another enterprise either comes first and is seen here, or comes after the new
 * address and finds no account under the old one.
 */
export async function updateSso(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
  input: PersonInput,
): Promise<boolean> {
  const { firstName, lastName, email } = person(input);
  const sso = await getLiveSso(ctx, enterpriseId, ssoId);
  const taken = () =>
    new ConflictError(`email: "${email}" is already registered to another account`);
  const key = emailKey(email);
  const fields = { firstName, lastName, email, emailKey: key, now: ctx.now().toISOString() };
  return ctx.db.transaction().execute(async (trx) => {
    await lockAccount(trx, sso.accountId);
    if (await isAccountHeldElsewhere(trx, sso.accountId, enterpriseId)) {
      throw new ConflictError(
        `sso: another enterprise also holds an SSO of this person, so their name and address cannot be changed`,
      );
    }
    // An invited person's account is their own until they accept: otherwise an enterprise could
    // invite someone whose first enterprise has let them go (E2), move the account to an address
    // of its own, and accept the invitation mailed there (E3 mails it again after the hour).
    if (sso.status === 'PENDING_ACTIVATION') {
      throw new ConflictError(
        `sso: the person has not accepted this enterprise's invitation yet, so their name and address cannot be changed`,
      );
    }
    const owner = await findAccountByEmailKey(trx, key);
    if (owner && owner.id !== sso.accountId) throw taken();
    // False when someone took the address between the check and the update.
    if (!(await updateAccount(trx, sso.accountId, fields))) throw taken();
    await recordAudit(ctx, trx, {
      action: 'sso.updated',
      enterpriseId,
      target: { type: 'sso', id: ssoId },
    });
    return true;
  });
}
