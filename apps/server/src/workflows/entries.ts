// What entering with a token does (docs/entry.md): C6 enters a console pal and runs its `console`
// export `action`; T5 enters a transaction as `participant` and T8 as `anonymous` (T8 runs the
// export `action`); P3 creates a NEW transaction of the pal with the SSO (or a fresh guest SSO)
// as its `owner`. T5 and P3 run the export `enter` when the module has one. A missing module or
// export is no error. Then a browser session starts, showing the outcome. An entry whose person
// may not act (domain/session-standing.ts) starts nothing; an action on a transaction whose
// systemStatus forbids runs is not run, and the page says so.
import type { Person } from '@pal-workflow/types';
import type { WorkflowContext } from './context.js';
import { ConflictError, ForbiddenError, GoneError, TooManyRunsError } from '../domain/errors.js';
import { randomId } from '../domain/ids.js';
import type { MailLink } from '../domain/mail-links.js';
import {
  readStandingFacts,
  sessionStanding,
  standingBeforeRole,
} from '../domain/session-standing.js';
import {
  basisOf,
  createSession,
  saveOutcome,
  sessionOf,
  type ActionOutcome,
  type BrowserSession,
  type SessionStart,
} from '../domain/sessions.js';
import type { GivenSignature } from '../domain/document-state.js';
import { createSso, GUEST_DOMAIN, isGuest } from '../domain/ssos.js';
import { findSso } from '../storage/ssos.js';
import type { DocumentSubmission, UploadInfo } from '../domain/transaction-documents.js';
import { assignRole } from '../domain/transaction-roles.js';
import { redeemToken } from '../domain/tokens.js';
import { cachedPalDetails } from '../domain/pals.js';
import { createTransaction, getTransactionDetails, toDetails } from '../domain/transactions.js';
import {
  runConsoleModule,
  runTransactionModule,
  type KnownTransaction,
  type RunAnswer,
} from './engine.js';
import { consoleResult, transactionResult } from './output.js';

/** Consumes the token, does what it is for, and starts a session; returns the cookie's value. */
export async function enter(
  ctx: WorkflowContext,
  token: string,
  requestId?: string,
): Promise<string> {
  // One commit for the token's redemption, what the entry makes (P3's transaction and guest SSO),
  // the role and the session: if the role cannot be given or the person may not act, nothing is
  // made and the token is not used up. The entry's action runs after it, as any run does.
  const started = await ctx.db.transaction().execute(async (trx) => {
    const dbTx: WorkflowContext = { ...ctx, db: trx };
    const { entry, audit } = await redeemToken(dbTx, token);
    const newTransaction = entry.kind === 'new-transaction';
    const transactionId = newTransaction
      ? (
          await createTransaction(
            dbTx,
            entry.enterpriseId,
            entry.palId,
            // As cached: the transaction writes no pal, and reading it inside (where the cache
            // serves nothing) parses the manifest while holding SQLite's writer. Read there only
            // when not cached; a read outside would wait for a second connection while holding
            // one, which PostgreSQL's pool may not have.
            cachedPalDetails(ctx, entry.enterpriseId, entry.palId),
          )
        ).id
      : entry.transactionId;
    const start: SessionStart = {
      kind: entry.kind === 'new-transaction' ? 'owner' : entry.kind,
      enterpriseId: entry.enterpriseId,
      palId: entry.palId,
      transactionId,
      // An anonymous entry shows no SSO in the page; its role is still recorded (for T2/T4/T7),
      // and the session rests on it. P3 with userSSO=auto: a guest SSO, made here.
      standingSso: entry.ssoId ?? (await guestSso(dbTx, entry.enterpriseId)),
      role: newTransaction ? 'owner' : entry.kind === 'console' ? null : entry.kind,
      profile: entry.profile,
      outcome: null,
    };
    // The SSO and the transaction, read once for the role and for the session's standing.
    const facts = transactionId
      ? await readStandingFacts(dbTx, entry.enterpriseId, transactionId, start.standingSso)
      : undefined;
    if (transactionId) {
      // Judged before the role is given, which would refuse a person who may not act with a
      // conflict naming their SSO: a person is owed the 403 page's words, an anonymous one too.
      const before = standingBeforeRole(facts!, start.kind === 'anonymous');
      if (!before.ok) throw new ForbiddenError(before.reason);
      await assignRole(
        dbTx,
        entry.enterpriseId,
        transactionId,
        start.standingSso,
        start.role!,
        facts,
      );
    }
    const standing = await sessionStanding(dbTx, basisOf(start), facts);
    if (!standing.ok) throw new ForbiddenError(standing.reason);
    const known: KnownTransaction | undefined = facts?.transaction && toDetails(facts.transaction);
    return { entry, start, known, cookie: await createSession(dbTx, start, [audit]) };
  });
  const { entry } = started;

  // T5 and P3 run `enter` when there is one: its absence, or a state that forbids runs, is
  // nothing to show. A named action's outcome is shown whatever it is.
  const implicit = entry.kind === 'participant' || entry.kind === 'new-transaction';
  const action = implicit ? 'enter' : entry.action;
  if (action) {
    const { outcome, refused } = await runEntryAction(
      ctx,
      sessionOf(started.start),
      action,
      requestId,
      started.known,
    );
    if (!implicit || (outcome.ran && !refused)) await saveOutcome(ctx, started.cookie, outcome);
  }
  return started.cookie;
}

/**
 * An entry's action. When the transaction's systemStatus forbids runs it runs nothing and the
 * outcome says why (the entry still shows the transaction).
 */
async function runEntryAction(
  ctx: WorkflowContext,
  session: BrowserSession,
  action: string,
  requestId?: string,
  known?: KnownTransaction,
): Promise<{ outcome: ActionOutcome; refused: boolean }> {
  try {
    const outcome = await runAction(ctx, session, action, {}, requestId, undefined, known);
    return { outcome, refused: false };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const messages = [{ message: error.message, type: error.code }];
    return { outcome: { action, ran: true, success: false, messages }, refused: true };
  }
}

/** P3 with userSSO=auto: a person of the enterprise known only by this SSO. */
async function guestSso(ctx: WorkflowContext, enterpriseId: string): Promise<string> {
  const tag = randomId(9);
  return createSso(ctx, enterpriseId, {
    firstName: 'Guest',
    lastName: tag,
    email: `guest-${tag.toLowerCase()}${GUEST_DOMAIN}`,
  });
}

/** A run's `input.person`: the session's SSO as the enterprise knows them; none for a guest. */
function personOf(sso: Person | null | undefined): { person?: Person } {
  if (!sso || isGuest(sso)) return {};
  return { person: { firstName: sso.firstName, lastName: sso.lastName, email: sso.email } };
}

/** What a session page's form gives a run beside its values (domain/form-submission.ts). */
export interface FormRun {
  /** The session's SSO as the form read it (for `input.person`); null for an anonymous session. */
  sso: Person | null;
  /** `input.signatures`. */
  signatures: GivenSignature[];
  /** `input.uploads`: the form's files, described. */
  uploads: UploadInfo[];
  /** Kept with the run's effects when it succeeds and answers `success` true. */
  submission: DocumentSubmission;
}

/** Runs an export of the session's pal (console) or transaction, for the session page. */
export async function runAction(
  ctx: WorkflowContext,
  session: BrowserSession,
  action: string,
  values: Record<string, string>,
  requestId?: string,
  form?: FormRun,
  /** The transaction as the caller just read it (TransactionRunOptions.known). */
  known?: KnownTransaction,
): Promise<ActionOutcome> {
  const input = async () => {
    const sso = form
      ? form.sso
      : session.ssoId
        ? await findSso(ctx.db, session.enterpriseId, session.ssoId)
        : null;
    return {
      values,
      ...(form ? { signatures: form.signatures, uploads: form.uploads } : {}),
      action,
      ...(session.ssoId ? { sso: session.ssoId } : {}),
      // A page never asks a person for what the service knows of them: the workflow may fill it in.
      ...personOf(sso),
    };
  };
  // A missing module or export is no error: the action did not run.
  const failed: RunAnswer<ActionOutcome>['failed'] = (failure) =>
    failure.type === 'NO_WORKFLOW'
      ? { action, ran: false, success: true, messages: [] }
      : {
          action,
          ran: true,
          success: false,
          messages: [{ message: failure.message, type: failure.type }],
        };
  const shown = (result: { success: boolean; messages?: ActionOutcome['messages'] }) => ({
    action,
    ran: true,
    success: result.success,
    messages: result.messages ?? [],
  });
  try {
    return session.transactionId === null
      ? await runConsoleModule(ctx, session.enterpriseId, session.palId, {
          exportName: action,
          input: async (palId) => ({ ...(await input()), palId }),
          answer: { shape: (value, palId) => shown(consoleResult(value, palId)), failed },
          requestId,
        })
      : await runTransactionModule(ctx, session.enterpriseId, session.transactionId, {
          exportName: action,
          webService: false,
          input: async (palId) => ({
            ...(await input()),
            transactionId: session.transactionId!,
            palId,
          }),
          answer: {
            shape: (value, palId) => shown(transactionResult(value, palId, session.transactionId!)),
            failed,
          },
          requestId,
          ...(form
            ? { submission: form.submission, keepsSubmission: (value) => value.success }
            : {}),
          known,
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
}

/**
 * The session a mailed link starts: the recipient on the link's transaction. GoneError (410) when
 * the link may no longer enter: its recipient is not ACTIVE, or the transaction is ARCHIVED.
 * Changes nothing (the GET of the link's confirm page asks it too).
 */
export async function mailLinkSession(ctx: WorkflowContext, link: MailLink): Promise<SessionStart> {
  const transaction = await getTransactionDetails(ctx, link.enterpriseId, link.transactionId);
  const start: SessionStart = {
    kind: 'mail',
    enterpriseId: link.enterpriseId,
    palId: transaction.palId,
    transactionId: transaction.id,
    standingSso: link.recipientSso,
    role: null,
    profile: null,
    outcome: null,
  };
  const standing = await sessionStanding(ctx, basisOf(start));
  if (!standing.ok) throw new GoneError();
  return { ...start, role: standing.role };
}

/** A mailed link's confirmed POST: enters as the recipient (mailLinkSession) and runs the action. */
export async function enterFromMail(
  ctx: WorkflowContext,
  link: MailLink,
  requestId?: string,
): Promise<string> {
  const start = await mailLinkSession(ctx, link);
  const { outcome } = await runEntryAction(ctx, sessionOf(start), link.action, requestId);
  return createSession(ctx, { ...start, outcome });
}
