// What entering with a token does (DESIGN §6): C6 enters a console pal and runs its `console`
// export `action`; T5 enters a transaction as `participant` and T8 as `anonymous` (T8 runs the
// export `action`); P3 creates a NEW transaction of the pal with the SSO (or a fresh guest SSO)
// as its `owner`. T5 and P3 run the export `enter` when the module has one. A missing module or
// export is no error. Then a browser session starts, showing the outcome.
import type { DomainContext } from '../domain/context.js';
import { randomId } from '../domain/ids.js';
import { GoneError, TooManyRunsError } from '../domain/errors.js';
import type { MailLink } from '../domain/mail-links.js';
import { createSso, getSso } from '../domain/ssos.js';
import { assignRole, listRoles } from '../domain/transaction-roles.js';
import {
  createSession,
  saveOutcome,
  type ActionOutcome,
  type BrowserSession,
} from '../domain/sessions.js';
import { redeemToken, type RedeemedToken } from '../domain/tokens.js';
import { createTransaction, getTransactionDetails } from '../domain/transactions.js';
import { runConsoleModule, runTransactionModule, type RunResult } from './engine.js';
import { consoleResult, transactionResult } from './output.js';

/** Consumes the token, does what it is for, and starts a session; returns the cookie's value. */
export async function enter(
  ctx: DomainContext,
  token: string,
  requestId?: string,
): Promise<string> {
  // One commit for C6, T5 and T8: the token's redemption, the role and the session together (if
  // the role cannot be given, the token is not used up). P3 makes an SSO and a transaction, each
  // with a transaction of its own, so it goes on after the redemption.
  const started = await ctx.db.transaction().execute(async (trx) => {
    const tx: DomainContext = { ...ctx, db: trx };
    const entry = await redeemToken(tx, token);
    if (entry.kind === 'new-transaction') return { entry, cookie: undefined };
    const session = {
      enterpriseId: entry.enterpriseId,
      palId: entry.palId,
      transactionId: entry.transactionId,
      // An anonymous entry shows no SSO in the page (its role is still recorded, for T2/T4/T7).
      ssoId: entry.kind === 'anonymous' ? null : entry.ssoId,
      role: entry.kind === 'console' ? null : entry.kind,
    };
    if (session.transactionId)
      await assignRole(tx, entry.enterpriseId, session.transactionId, entry.ssoId!, session.role!);
    return { entry, session, cookie: await createSession(tx, { ...session, outcome: null }) };
  });
  const { entry } = started;
  if (started.cookie === undefined) return enterNewTransaction(ctx, entry, requestId);

  const action = entry.kind === 'participant' ? 'enter' : entry.action;
  if (action) {
    const outcome = await runAction(
      ctx,
      { ...started.session!, csrf: '', outcome: null },
      action,
      {},
      requestId,
    );
    // A missing `enter` is nothing to show; a missing named action is.
    if (outcome.ran || action !== 'enter') await saveOutcome(ctx, started.cookie, outcome);
  }
  return started.cookie;
}

/** P3: a NEW transaction of the pal, owned by the SSO or a fresh guest SSO. */
async function enterNewTransaction(
  ctx: DomainContext,
  entry: RedeemedToken,
  requestId?: string,
): Promise<string> {
  const { enterpriseId, palId } = entry;
  const ssoId = entry.ssoId ?? (await guestSso(ctx, enterpriseId));
  const transactionId = (await createTransaction(ctx, enterpriseId, palId)).id;
  await assignRole(ctx, enterpriseId, transactionId, ssoId, 'owner');
  const session = { enterpriseId, palId, transactionId, ssoId, role: 'owner' };
  const outcome = await runAction(
    ctx,
    { ...session, csrf: '', outcome: null },
    'enter',
    {},
    requestId,
  );
  return createSession(ctx, { ...session, outcome: outcome.ran ? outcome : null });
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
  let result: RunResult<{ success: boolean; messages?: ActionOutcome['messages'] }>;
  try {
    result =
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
  } catch (error) {
    // The enterprise has as many runs in progress as it may: the page says so (the session and
    // its entry are kept, so the person may simply run the action again), never a 429 page.
    if (!(error instanceof TooManyRunsError)) throw error;
    return {
      action,
      ran: true,
      success: false,
      messages: [{ message: error.message, type: error.code }],
    };
  }
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
