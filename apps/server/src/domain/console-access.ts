// Console access (C3, C4): which SSO may use which console-mode pal of the enterprise, under the
// enterprise's profile or the person's own. A pal or SSO of another enterprise is NotFound.
import {
  deleteConsoleGrant,
  hasLiveConsoleGrant,
  insertConsoleGrant,
  type ConsoleGrantKey,
} from '../storage/console-grants.js';
import { setTimeout } from 'node:timers/promises';
import { dialectOf } from '../storage/adapter-dialect.js';
import { withdrawConsoleSessions } from '../storage/browser-sessions.js';
import type { Db } from '../storage/database.js';
import { deleteUnusedConsoleTokens } from '../storage/tokens.js';
import { recordAudit } from './audit.js';
import type { DomainContext } from './context.js';
import { ConflictError, InvalidArgumentError } from './errors.js';
import { getPal } from './pals.js';
import { getLiveSso, getSso } from './ssos.js';
import { inTransaction } from './transact.js';

function grantKey(
  enterpriseId: string,
  palId: string,
  ssoId: string,
  useEnterpriseProfile: boolean,
): ConsoleGrantKey {
  return { enterpriseId, palId, ssoId, profile: useEnterpriseProfile ? 'enterprise' : 'personal' };
}

/**
 * The grant C3 or C4 names, once the pal is a console pal of the enterprise and the SSO is the
 * enterprise's; a new grant needs an SSO that is not deleted, removing one does not.
 */
async function checkedGrantKey(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  ssoId: string,
  useEnterpriseProfile: boolean,
  sso: 'live' | 'any',
): Promise<ConsoleGrantKey> {
  const pal = await getPal(ctx, enterpriseId, palId);
  if (!pal.modeConsole)
    throw new InvalidArgumentError(`palId: pal "${palId}" is not a console-mode pal`);
  await (sso === 'live' ? getLiveSso : getSso)(ctx, enterpriseId, ssoId, 'ssoId');
  return grantKey(enterpriseId, palId, ssoId, useEnterpriseProfile);
}

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
  const grant = await checkedGrantKey(
    ctx,
    enterpriseId,
    palId,
    ssoId,
    useEnterpriseProfile,
    'live',
  );
  // A grant given again changes nothing, and is no act to record (a client could pad its trail).
  // So the grant and its record commit together: a record lost after its grant would never be
  // written by a retry, which finds the grant there.
  await inTransaction(ctx, async ({ db }) => {
    if (await insertConsoleGrant(db, grant, ctx.now().toISOString()))
      await recordAudit(ctx, db, grantAudit('grant.given', grant));
  });
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
  const grant = await checkedGrantKey(ctx, enterpriseId, palId, ssoId, useEnterpriseProfile, 'any');
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(ctx, ({ db }) => removeGrant(ctx, db, grant));
    } catch (error) {
      // A token held by an entry that waits for the grant: this attempt lets go of the grant, the
      // entry ends (entered, or refused), and the next attempt withdraws what it left.
      const retry = dialectOf(ctx.db).isLockNotAvailable(error) && !ctx.db.isTransaction;
      if (!retry) throw error;
      if (attempt === C4_ATTEMPTS)
        throw new ConflictError(
          'the console grant is being used by entries right now, and was not removed: try again',
        );
      await setTimeout(attempt * 10 + Math.random() * 10);
    }
  }
}

/** How often C4 starts again when an entry holds one of the grant's tokens. */
const C4_ATTEMPTS = 10;

async function removeGrant(ctx: DomainContext, db: Db, grant: ConsoleGrantKey): Promise<boolean> {
  // What the grant gave ends with it: a grant given again is a new one, and does not revive it.
  // Its unused tokens go; its sessions end at their next request (session-standing.ts). The
  // tokens before the grant, in the order a C6 entry locks them (its token, then the grant it
  // rests on): an entry that holds its token gets the grant and ends first.
  const tokensBefore = await deleteUnusedConsoleTokens(db, grant);
  const removed = await deleteConsoleGrant(db, grant);
  if (!removed) return false;
  // A C6 issuing a token holds the grant's row until its token is committed (domain/tokens.ts),
  // so the grant's delete waited for it: its token is read now, and goes too. An entry may hold
  // such a token already, waiting for the grant held here: waiting for the token would deadlock,
  // and passing over it would leave it unused once that entry is refused. So its lock fails at
  // once, and C4 starts again (deleteConsoleAccess).
  const tokensAfter = await deleteUnusedConsoleTokens(db, grant, { noWait: true });
  const tokensWithdrawn = tokensBefore + tokensAfter;
  await withdrawConsoleSessions(db, grant);
  const audit = grantAudit('grant.removed', grant);
  await recordAudit(ctx, db, { ...audit, details: { ...audit.details, tokensWithdrawn } });
  return true;
}

function grantAudit(action: 'grant.given' | 'grant.removed', grant: ConsoleGrantKey) {
  return {
    action,
    enterpriseId: grant.enterpriseId,
    target: { type: 'sso', id: grant.ssoId },
    details: { palId: grant.palId, profile: grant.profile },
  } as const;
}

/**
 * Whether the SSO may use the console pal under that profile: C6 issues a token only then, and a
 * console session goes on only while it holds (domain/session-standing.ts).
 */
export async function hasConsoleAccess(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  ssoId: string,
  useEnterpriseProfile: boolean,
): Promise<boolean> {
  return hasLiveConsoleGrant(ctx.db, grantKey(enterpriseId, palId, ssoId, useEnterpriseProfile));
}
