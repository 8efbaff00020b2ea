// Single-use entry tokens (docs/entry.md): C6 (a console pal), T5 (a transaction, as participant),
// T8 (a transaction, anonymously) and P3 (a new transaction of a pal, as its owner). 256 random
// bits, base64url, stored only as SHA-256, consumed by one conditional UPDATE, so of any number of
// concurrent redeemers, on any number of nodes, exactly one wins.
import { consumeToken, deleteSpentTokens, insertToken, type TokenRow } from '../storage/tokens.js';
import { hashRef, recordAudit, type AuditEntry } from './audit.js';
import type { DomainContext } from './context.js';
import { hasConsoleAccess } from './console-access.js';
import { ConflictError, ForbiddenError, GoneError, NotFoundError } from './errors.js';
import { hashToken, looksLikeToken, newToken } from './ids.js';
import { getPalDetails } from './pals.js';
import { getSso } from './ssos.js';
import { getTransactionDetails } from './transactions.js';
import { inTransaction } from './transact.js';
import { requireText } from './validate.js';
import { inSweepBatches } from './sweep-batches.js';

export type TokenKind = 'console' | 'participant' | 'anonymous' | 'new-transaction';

/** T5 and T8 tokens live 60 s (spec §8); C6 and P3 tokens TOKEN_TTL_SECONDS. */
const SHORT_TTL_SECONDS = 60;
const MAX_ACTION_LENGTH = 200;
/** P3's `userSSO` that asks for a fresh guest SSO at entry. */
export const AUTO_SSO = 'auto';

export interface RedeemedToken {
  kind: TokenKind;
  enterpriseId: string;
  palId: string;
  transactionId: string | null;
  /** Null for P3 with userSSO=auto (a guest SSO is made at entry). */
  ssoId: string | null;
  action: string | null;
  /** C6: the profile the console pal is entered under. */
  profile: 'enterprise' | 'personal' | null;
}

/** The SSO a token is for: of the enterprise (else 404) and ACTIVE (else 409). */
async function activeSso(ctx: DomainContext, enterpriseId: string, ssoId: string, field: string) {
  // Its length is the schema's (200); here only what the schema does not say.
  const sso = await getSso(ctx, enterpriseId, requireText(field, ssoId, Infinity));
  if (sso.status !== 'ACTIVE')
    throw new ConflictError(`${field}: SSO "${ssoId}" is ${sso.status}, not ACTIVE`);
  return sso;
}

function optionalAction(action: string | undefined): string | null {
  return action === undefined || action === ''
    ? null
    : requireText('action', action, MAX_ACTION_LENGTH);
}

/**
 * Stores the token and its audit record in one transaction; `standsOn` runs first in it, to check
 * what the token rests on while nothing else can remove it (C6: the console grant).
 */
async function store(
  ctx: DomainContext,
  token: Omit<RedeemedToken, 'profile'> & { profile?: RedeemedToken['profile'] },
  ttlSeconds: number,
  standsOn?: (tx: DomainContext) => Promise<void>,
): Promise<string> {
  const value = newToken();
  const now = ctx.now();
  const row = {
    token_hash: hashToken(value),
    kind: token.kind,
    enterprise_id: token.enterpriseId,
    pal_id: token.palId,
    transaction_id: token.transactionId,
    sso_id: token.ssoId,
    action: token.action,
    data: token.profile ? JSON.stringify({ profile: token.profile }) : null,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
    used_at: null,
  };
  await inTransaction(ctx, async (tx) => {
    const { db } = tx;
    if (standsOn) await standsOn(tx);
    await insertToken(db, row);
    await recordAudit(ctx, db, tokenAudit('token.issued', row));
  });
  return value;
}

/**
 * C6: a token to enter a console pal; `action` is the `console` export the entry runs. After the
 * 404 and 409 rules of every token, 403 when the SSO has no console grant (C3) of the pal under
 * that profile.
 */
export async function issueConsoleToken(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  ssoId: string,
  useEnterpriseProfile: boolean,
  action?: string,
): Promise<string> {
  const pal = await getPalDetails(ctx, enterpriseId, palId);
  await activeSso(ctx, enterpriseId, ssoId, 'ssoId');
  if (!pal.modeConsole) throw NotFoundError.of('console pal', palId);
  // The grant is checked (and its row locked) in the token's own transaction: checked before it,
  // a C4 that ended in between would not have seen the token it withdraws, and a later C3 would
  // let the token of the removed grant in.
  const standsOnGrant = async (tx: DomainContext) => {
    if (!(await hasConsoleAccess(tx, enterpriseId, palId, ssoId, useEnterpriseProfile))) {
      const profile = useEnterpriseProfile ? 'enterprise' : 'personal';
      throw new ForbiddenError(
        `ssoId: SSO "${ssoId}" has no console grant of pal "${palId}" under the ${profile} profile (C3 gives one)`,
      );
    }
  };
  return store(
    ctx,
    {
      kind: 'console',
      enterpriseId,
      palId,
      transactionId: null,
      ssoId,
      action: optionalAction(action),
      profile: useEnterpriseProfile ? 'enterprise' : 'personal',
    },
    ctx.config.tokenTtlSeconds,
    standsOnGrant,
  );
}

/** T5 (participant) and T8 (anonymous, with the `transaction` export `action` to run). */
export async function issueTransactionToken(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  ssoId: string,
  kind: 'participant' | 'anonymous',
  action?: string,
): Promise<string> {
  const transaction = await getTransactionDetails(ctx, enterpriseId, transactionId);
  await activeSso(ctx, enterpriseId, ssoId, 'userSSO');
  return store(
    ctx,
    {
      kind,
      enterpriseId,
      palId: transaction.palId,
      transactionId,
      ssoId,
      action: kind === 'anonymous' ? optionalAction(action) : null,
    },
    SHORT_TTL_SECONDS,
  );
}

/** P3: a token to enter a NEW transaction of a transaction-mode pal as its owner; the entry URL. */
export async function issuePalToken(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  userSso: string,
): Promise<string> {
  const pal = await getPalDetails(ctx, enterpriseId, palId);
  const auto = userSso === AUTO_SSO;
  if (!auto) await activeSso(ctx, enterpriseId, userSso, 'userSSO');
  if (!pal.modeTransaction) throw NotFoundError.of('transaction pal', palId);
  const token = await store(
    ctx,
    {
      kind: 'new-transaction',
      enterpriseId,
      palId,
      transactionId: null,
      ssoId: auto ? null : userSso,
      action: null,
    },
    ctx.config.tokenTtlSeconds,
  );
  return entryUrl(ctx, token);
}

/** The audit record of a token's issue or redemption: what it is for, never the token. */
function tokenAudit(
  action: 'token.issued' | 'token.redeemed',
  row: Pick<
    TokenRow,
    'token_hash' | 'kind' | 'enterprise_id' | 'pal_id' | 'transaction_id' | 'sso_id' | 'action'
  >,
) {
  return {
    action,
    enterpriseId: row.enterprise_id,
    target: row.transaction_id
      ? { type: 'transaction', id: row.transaction_id }
      : { type: 'pal', id: row.pal_id ?? '' },
    details: {
      kind: row.kind,
      tokenRef: hashRef(row.token_hash),
      sso: row.sso_id,
      palId: row.pal_id,
    },
  } as const;
}

export function entryUrl(ctx: DomainContext, token: string): string {
  return `${ctx.config.publicUrl}/${ctx.config.serviceRoot}/enter/${token}`;
}

/**
 * Consumes a token. Unknown, used and expired tokens are one GoneError (410), so nothing leaks.
 * The audit record of the redemption is the caller's to write in the same database transaction
 * (an entry writes it with its session's, in one statement).
 */
export async function redeemToken(
  ctx: DomainContext,
  token: string,
): Promise<{ entry: RedeemedToken; audit: AuditEntry }> {
  if (!looksLikeToken(token)) throw new GoneError();
  const now = ctx.now().toISOString();
  const row = await consumeToken(ctx.db, hashToken(token), now);
  if (!row) throw new GoneError();
  const audit: AuditEntry = {
    ...tokenAudit('token.redeemed', row),
    actor:
      row.kind === 'anonymous' || !row.sso_id
        ? { type: 'anonymous', id: null }
        : { type: 'sso', id: row.sso_id },
  };
  const data =
    row.data === null ? {} : (JSON.parse(row.data) as { profile?: RedeemedToken['profile'] });
  const entry: RedeemedToken = {
    kind: row.kind as TokenKind,
    enterpriseId: row.enterprise_id,
    palId: row.pal_id!,
    transactionId: row.transaction_id,
    ssoId: row.sso_id,
    action: row.action,
    profile: data.profile ?? null,
  };
  return { entry, audit };
}

/** Removes tokens that can no longer be redeemed; how many. */
export async function sweepTokens(ctx: DomainContext): Promise<number> {
  const now = ctx.now().toISOString();
  return inSweepBatches((limit) => deleteSpentTokens(ctx.db, now, limit));
}
