// Roles of SSOs on transactions (T4, T7, entries and workflows): participant, anonymous, owner,
// or a workflow's own. A transaction or SSO of another enterprise is NotFound.
import {
  deleteEnterpriseRolesOfSso,
  deleteTransactionRoles,
  insertTransactionRole,
  listTransactionRoles,
  transactionExists,
} from '../storage/transaction-roles.js';
import { deleteUnusedTransactionTokens } from '../storage/tokens.js';
import { recordAudit } from './audit.js';
import type { DomainContext } from './context.js';
import { InvalidArgumentError, NotFoundError } from './errors.js';
import type { StandingFacts } from './session-standing.js';
import { getLiveSso, getSso, requireLive } from './ssos.js';
import { inTransaction } from './transact.js';
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

/**
 * T7 (and a workflow's `pal.roles.remove`): removes every role of the SSO on the transaction; how
 * many. 404: either not in the enterprise. `withdrawTokens: false` leaves the SSO's unused T5 and
 * T8 tokens (a workflow's run, which holds the transaction's row an entry waits for).
 */
export async function removeRole(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId: string,
  options: { withdrawTokens: boolean } = { withdrawTokens: true },
): Promise<number> {
  await requireTransaction(ctx, enterpriseId, transactionId);
  await getSso(ctx, enterpriseId, ssoId, 'userSSO');
  return withdrawRoles(ctx, { enterpriseId, ssoId, transactionId }, options.withdrawTokens);
}

/** T4: removes every role of the SSO on the enterprise's transactions; how many. 404: no such SSO. */
export async function removeAllRoles(
  ctx: DomainContext,
  enterpriseId: string,
  ssoId: string,
): Promise<number> {
  await getSso(ctx, enterpriseId, ssoId, 'userSSO');
  return withdrawRoles(ctx, { enterpriseId, ssoId, transactionId: null }, true);
}

/**
 * Removes the SSO's roles on one transaction or (null) all of the enterprise's, and the unused T5
 * and T8 tokens that would give them again: a person whose role was taken does not come back in
 * with a token issued before. The tokens go first, in the order an entry takes them (its token,
 * then its role): an entry that holds its token ends first, and the role it gave is then removed
 * here. A token issued after this commit enters, as DESIGN §5 says: issuing it gives the role anew.
 */
async function withdrawRoles(
  ctx: DomainContext,
  where: { enterpriseId: string; ssoId: string; transactionId: string | null },
  withdrawTokens: boolean,
): Promise<number> {
  return inTransaction(ctx, async ({ db }) => {
    const tokensWithdrawn = withdrawTokens ? await deleteUnusedTransactionTokens(db, where) : 0;
    const removed =
      where.transactionId === null
        ? await deleteEnterpriseRolesOfSso(db, where.enterpriseId, where.ssoId)
        : await deleteTransactionRoles(db, where.transactionId, where.ssoId);
    await recordAudit(ctx, db, {
      action: 'roles.removed',
      enterpriseId: where.enterpriseId,
      target: { type: 'sso', id: where.ssoId },
      details: {
        transactionId: where.transactionId,
        removed,
        ...(withdrawTokens ? { tokensWithdrawn } : {}),
      },
    });
    return removed;
  });
}
