// What entering with a token does (DESIGN §6): C6 enters a console pal and runs its `console`
// export `action`; T5 enters a transaction as `participant` and T8 as `anonymous` (T8 runs the
// export `action`); P3 creates a NEW transaction of the pal with the SSO (or a fresh guest SSO)
// as its `owner`. T5 and P3 run the export `enter` when the module has one. A missing module or
// export is no error. Then a browser session starts, showing the outcome.
import type { DomainContext } from '../domain/context.js';
import { randomId } from '../domain/ids.js';
import { GoneError } from '../domain/errors.js';
import type { MailLink } from '../domain/mail-links.js';
import { assignRole, createSso, getSso, listRoles } from '../domain/people.js';
import { createSession, type ActionOutcome, type BrowserSession } from '../domain/sessions.js';
import { redeemToken } from '../domain/tokens.js';
import { createTransaction, getTransactionDetails } from '../domain/transactions.js';
import { runConsoleModule, runTransactionModule, type RunResult } from './engine.js';
import { consoleResult, transactionResult } from './output.js';

/** Consumes the token, does what it is for, and starts a session; returns the cookie's value. */
export async function enter(
  ctx: DomainContext,
  token: string,
  requestId?: string,
): Promise<string> {
  const entry = await redeemToken(ctx, token);
  const { enterpriseId, palId } = entry;
  if (entry.kind === 'console') {
    const session = { enterpriseId, palId, transactionId: null, ssoId: entry.ssoId, role: null };
    const outcome = entry.action
      ? await runAction(ctx, { ...session, csrf: '', outcome: null }, entry.action, {}, requestId)
      : null;
    return createSession(ctx, { ...session, outcome });
  }
  let transactionId = entry.transactionId!;
  let ssoId = entry.ssoId;
  const role = entry.kind === 'new-transaction' ? 'owner' : entry.kind;
  if (entry.kind === 'new-transaction') {
    ssoId ??= await guestSso(ctx, enterpriseId);
    transactionId = (await createTransaction(ctx, enterpriseId, palId)).id;
  }
  await assignRole(ctx, enterpriseId, transactionId, ssoId!, role);
  const session = {
    enterpriseId,
    palId,
    transactionId,
    // An anonymous entry shows no SSO in the page (its role is still recorded, for T2/T4/T7).
    ssoId: entry.kind === 'anonymous' ? null : ssoId,
    role,
  };
  const action = entry.kind === 'anonymous' ? entry.action : 'enter';
  const outcome = action
    ? await runAction(ctx, { ...session, csrf: '', outcome: null }, action, {}, requestId)
    : null;
  return createSession(ctx, { ...session, outcome });
}

/** P3 with userSSO=auto: a person of the enterprise known only by this SSO. */
async function guestSso(ctx: DomainContext, enterpriseId: string): Promise<string> {
  const tag = randomId(9);
  return createSso(ctx, enterpriseId, {
    firstName: 'Guest',
    lastName: tag,
    email: `guest-${tag.toLowerCase()}@guest.invalid`,
  });
}

/** Runs an export of the session's pal (console) or transaction, for the session page. */
export async function runAction(
  ctx: DomainContext,
  session: BrowserSession,
  action: string,
  values: Record<string, string>,
  requestId?: string,
): Promise<ActionOutcome> {
  const input = { values, action, ...(session.ssoId ? { sso: session.ssoId } : {}) };
  const result: RunResult<{ success: boolean; messages?: ActionOutcome['messages'] }> =
    session.transactionId === null
      ? await runConsoleModule(ctx, session.enterpriseId, session.palId, {
          exportName: action,
          input: { ...input, palId: session.palId },
          shape: (value) => consoleResult(value, session.palId),
          requestId,
        })
      : await runTransactionModule(ctx, session.enterpriseId, session.transactionId, {
          exportName: action,
          webService: false,
          input: { ...input, transactionId: session.transactionId },
          shape: (value, palId) => transactionResult(value, palId, session.transactionId!),
          requestId,
        });
  if (result.ok)
    return {
      action,
      ran: true,
      success: result.value.success,
      messages: result.value.messages ?? [],
    };
  if (result.type === 'NO_WORKFLOW') return { action, ran: false, success: true, messages: [] };
  return {
    action,
    ran: true,
    success: false,
    messages: [{ message: result.message, type: result.type }],
  };
}

/**
 * A mailed link's confirmed POST: enters the transaction as the recipient (an SSO of the
 * enterprise that is still ACTIVE, else 410) and runs the link's action.
 */
export async function enterFromMail(
  ctx: DomainContext,
  link: MailLink,
  requestId?: string,
): Promise<string> {
  const sso = await getSso(ctx, link.enterpriseId, link.recipientSso).catch(() => undefined);
  if (!sso || sso.status !== 'ACTIVE') throw new GoneError();
  const roles = await listRoles(ctx, link.enterpriseId, link.transactionId, sso.id);
  const session = {
    enterpriseId: link.enterpriseId,
    palId: (await getTransactionDetails(ctx, link.enterpriseId, link.transactionId)).palId,
    transactionId: link.transactionId,
    ssoId: sso.id,
    role: roles[0]?.role ?? null,
  };
  const outcome = await runAction(
    ctx,
    { ...session, csrf: '', outcome: null },
    link.action,
    {},
    requestId,
  );
  return createSession(ctx, { ...session, outcome });
}
