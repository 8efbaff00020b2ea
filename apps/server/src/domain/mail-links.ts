// Links in workflow mails (docs/entry.md):
// `{PUBLIC_URL}/{service_root}/mail?encryptedToken=…&encryptedAction=…`. Both values are
// AES-256-GCM ciphertexts, base64url(12-byte IV ‖ ciphertext ‖ 16-byte tag), under a key derived
// from PAL_SECRET_KEY. The token names the enterprise, the transaction, the recipient SSO and an
// expiry; the action is the workflow export the link runs. The action is sealed with the token as
// associated data, so an action cannot be paired with another mail's token. Rotating PAL_SECRET_KEY
// makes every outstanding link undecryptable (400).
import type { KeyObject } from 'node:crypto';
import type * as Wire from '@pal-workflow/types';
import type { Config } from '../config.js';
import type { DomainContext } from './context.js';
import { GoneError, InvalidArgumentError, NotFoundError } from './errors.js';
import { seal, sealingKey, unseal } from './sealing.js';
import { getTransaction, getTransactionDetails } from './transactions.js';

/** Longest value accepted before any decryption is tried. */
const MAX_SEALED_LENGTH = 4096;
export const MAIL_LINK_LIFETIME_MS = 7 * 86_400_000;

export interface MailLink {
  enterpriseId: string;
  transactionId: string;
  recipientSso: string;
  action: string;
  /** ISO-8601. */
  expiresAt: string;
}

interface TokenPayload {
  e: string;
  t: string;
  s: string;
  x: number;
}

function linkKey(config: Config): KeyObject {
  return sealingKey(config.secretKey, 'mail-link-aes-256-gcm');
}

function open(key: KeyObject, sealed: string, name: string, associated?: Buffer): string {
  const text = sealed.length > MAX_SEALED_LENGTH ? undefined : unseal(key, sealed, associated);
  if (text === undefined) throw new InvalidArgumentError(`${name}: not a link this service sent`);
  return text;
}

/** The link a workflow mail carries. */
export function createMailLink(
  config: Config,
  link: Omit<MailLink, 'expiresAt'>,
  now: Date,
): string {
  const key = linkKey(config);
  const payload: TokenPayload = {
    e: link.enterpriseId,
    t: link.transactionId,
    s: link.recipientSso,
    x: now.getTime() + MAIL_LINK_LIFETIME_MS,
  };
  const encryptedToken = seal(key, JSON.stringify(payload));
  const encryptedAction = seal(key, link.action, Buffer.from(encryptedToken));
  const query = new URLSearchParams({ encryptedToken, encryptedAction });
  return `${config.publicUrl}/${config.serviceRoot}/mail?${query}`;
}

/**
 * What a link's pair of values says. 400 when either does not decrypt (tampered, truncated, of
 * another key, or paired with another mail's value); 410 when the link has expired.
 */
export function readMailLink(
  config: Config,
  encryptedToken: string,
  encryptedAction: string,
  now: Date,
): MailLink {
  const key = linkKey(config);
  const payload = JSON.parse(open(key, encryptedToken, 'encryptedToken')) as TokenPayload;
  const action = open(key, encryptedAction, 'encryptedAction', Buffer.from(encryptedToken));
  if (payload.x <= now.getTime())
    throw new GoneError('this link has expired: links in mails live 7 days');
  return {
    enterpriseId: payload.e,
    transactionId: payload.t,
    recipientSso: payload.s,
    action,
    expiresAt: new Date(payload.x).toISOString(),
  };
}

/**
 * T3: what a mailed link is about, for a client application: the transaction (of the caller's
 * enterprise, else 404), its pal, and the action the link runs.
 */
export async function resolveMailLink(
  ctx: DomainContext,
  enterpriseId: string,
  encryptedToken: string,
  encryptedAction: string,
): Promise<Wire.TransactionResult> {
  const link = readMailLink(ctx.config, encryptedToken, encryptedAction, ctx.now());
  if (link.enterpriseId !== enterpriseId) throw NotFoundError.of('transaction', link.transactionId);
  const [details, info] = await Promise.all([
    getTransactionDetails(ctx, enterpriseId, link.transactionId),
    getTransaction(ctx, enterpriseId, link.transactionId),
  ]);
  return {
    success: true,
    transactionId: details.id,
    palId: details.palId,
    action: link.action,
    emailType: WORKFLOW_MAIL,
    transactionInfoList: [info],
    recordsProcessed: 0,
  };
}

/** T3's emailType of the links that workflows mail (pal.mail.send). */
export const WORKFLOW_MAIL = 'workflow';
