// Roles of SSOs on transactions (T4, T7, entries and workflows): participant, anonymous, owner,
// or a workflow's own. A transaction or SSO of another enterprise is NotFound.
import {
  deleteEnterpriseRolesOfSso,
  deleteTransactionRoles,
  insertTransactionRole,
  listTransactionRoles,
  transactionExists,
} from '../storage/transaction-roles.js';
import { recordAudit } from './audit.js';
import type { DomainContext } from './context.js';
import { InvalidArgumentError, NotFoundError } from './errors.js';
import type { StandingFacts } from './session-standing.js';
import { getLiveSso, getSso, requireLive } from './ssos.js';
import { requireId } from './validate.js';

const ROLE_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

async function requireTransaction(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  facts?: StandingFacts,
): Promise<void> {
  const id = requireId('transactionId', transactionId);
  const exists = facts
    ? facts.transaction !== undefined
    : await transactionExists(ctx.db, enterpriseId, id);
  if (!exists) throw NotFoundError.of('transaction', transactionId);
}

/**
 * Gives the SSO a role on the transaction; true when it is new, false when the SSO held it
 * already. 404: no such transaction or SSO in the enterprise; 409: the SSO is deleted; 400: a role
 * name that is not 1 to 64 letters, digits, . _ -. `facts`: the transaction and SSO as the caller
 * (an entry) read them in its database transaction, judged instead of reading them again.
 */
export async function assignRole(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId: string,
  role: string,
  facts?: StandingFacts,
): Promise<boolean> {
  if (typeof role !== 'string' || !ROLE_PATTERN.test(role)) {
    throw new InvalidArgumentError(
      'role: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter',
    );
  }
  await requireTransaction(ctx, enterpriseId, transactionId, facts);
  if (facts) requireLive(facts.sso, requireId('userSSO', ssoId));
  else await getLiveSso(ctx, enterpriseId, ssoId, 'userSSO');
  return insertTransactionRole(
    ctx.db,
    { enterpriseId, transactionId, ssoId, role },
    ctx.now().toISOString(),
  );
}

/** The roles held on a transaction, optionally of one SSO, ordered by SSO and role. */
export async function listRoles(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId?: string,
): Promise<{ ssoId: string; role: string }[]> {
  await requireTransaction(ctx, enterpriseId, transactionId);
  return listTransactionRoles(ctx.db, transactionId, ssoId);
}

/** T7: removes every role of the SSO on the transaction; how many. 404: either not in the enterprise. */
export async function removeRole(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId: string,
): Promise<number> {
  await requireTransaction(ctx, enterpriseId, transactionId);
  await getSso(ctx, enterpriseId, ssoId, 'userSSO');
  const removed = await deleteTransactionRoles(ctx.db, transactionId, ssoId);
  await recordAudit(ctx, ctx.db, {
    action: 'roles.removed',
    enterpriseId,
    target: { type: 'sso', id: ssoId },
    details: { transactionId, removed },
  });
  return removed;
}

/** T4: removes every role of the SSO on the enterprise's transactions; how many. 404: no such SSO. */
export async function removeAllRoles(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
): Promise<number> {
  await getSso(ctx, enterpriseId, ssoId, 'userSSO');
  const removed = await deleteEnterpriseRolesOfSso(ctx.db, enterpriseId, ssoId);
  await recordAudit(ctx, ctx.db, {
    action: 'roles.removed',
    enterpriseId,
    target: { type: 'sso', id: ssoId },
    details: { transactionId: null, removed },
  });
  return removed;
}
