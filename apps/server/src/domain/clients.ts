// API clients: the BASIC credentials a client application uses; each belongs to one enterprise.
//
// The service generates every secret (256 random bits), so a slow password hash buys nothing: a
// keyed fast hash cannot be brute-forced without the key. Secrets are stored as
// HMAC-SHA-256(pepper, secret), the pepper derived from PAL_SECRET_KEY with HKDF, and compared in
// constant time.
//
// The domain verifies credentials against the database and announces every change of a client
// (ctx.clientChanges); caching verified credentials and throttling failed sign-ins are HTTP
// concerns (http/credentials.ts, http/sign-in-throttle.ts).
//
// A leaked or aging secret is replaced with `pal client rotate` (rotateClientSecret): the new
// secret works at once, the old one for CLIENT_SECRET_GRACE_SECONDS more (only the latest old one
// is kept). `pal client delete` (deleteClientByUsername) stops a client at once.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import {
  deleteApiClientRow,
  findApiClientByUsername,
  insertApiClient,
  listApiClientRows,
  rotateApiClientSecret,
  setApiClientSecretHash,
} from '../storage/api-clients.js';
import { recordAudit } from './audit.js';
import type { DomainContext } from './context.js';
import { getEnterprise } from './enterprises.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';
import { randomId } from './ids.js';

const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;
const MAX_SECRET_LENGTH = 1024;

/** True when `username` could be an API client's (what createClient and the CLI accept). */
export function isClientUsername(username: string): boolean {
  return USERNAME.test(username);
}

export interface ApiClient {
  clientId: string;
  enterpriseId: string;
  username: string;
  createdAt: string;
}

/** A new client with its secret. The secret is shown this once and never stored in clear. */
export interface NewApiClient extends ApiClient {
  password: string;
}

/** A client whose rotated secret was replaced: the new secret, shown this once. */
export interface RotatedApiClient {
  username: string;
  password: string;
  /** ISO-8601: when the replaced secret stops working (now, without a grace period). */
  oldPasswordExpiresAt: string;
}

export interface AuthenticatedClient {
  clientId: string;
  enterpriseId: string;
  /**
   * Only when the secret given is the one a rotation replaced: when it stops working (ms since
   * the epoch), so that nothing remembers it as verified for longer.
   */
  secretExpiresAt?: number;
}

/** What a credential check needs of a client: who it is and its stored secret hashes. */
export interface ClientCredential {
  clientId: string;
  enterpriseId: string;
  secretHash: Buffer;
  /** The secret the last rotation replaced, while it still works (until `previousExpiresAt`). */
  previousSecretHash?: Buffer;
  previousExpiresAt?: number;
}

/** The key that protects stored client secrets, derived from the server key. */
export function clientSecretPepper(secretKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'pal-workflow', 'api-client-secret-pepper', 32));
}

function secretHash(pepper: Buffer, secret: string): Buffer {
  return createHmac('sha256', pepper).update(secret, 'utf8').digest();
}

/**
 * Checks a secret against a client's stored hashes in constant time: the current one, and the one
 * a rotation replaced while its grace period lasts. Without a credential (unknown username) random
 * hashes stand in, so every path does the same work.
 */
export class SecretChecker {
  private readonly dummyHash: Buffer;

  constructor(private readonly pepper: Buffer) {
    this.dummyHash = secretHash(pepper, randomId(32));
  }

  /** The client when the secret is its current one or its previous one still in grace, or null. */
  check(
    credential: ClientCredential | undefined,
    password: string,
    nowMs: number,
  ): AuthenticatedClient | null {
    const tooLong = password.length > MAX_SECRET_LENGTH;
    const given = secretHash(this.pepper, tooLong ? '' : password);
    const current = timingSafeEqual(given, credential?.secretHash ?? this.dummyHash);
    const previous = timingSafeEqual(given, credential?.previousSecretHash ?? this.dummyHash);
    if (!credential || tooLong) return null;
    const { clientId, enterpriseId, previousSecretHash, previousExpiresAt } = credential;
    if (current) return { clientId, enterpriseId };
    if (
      previous &&
      previousSecretHash &&
      previousExpiresAt !== undefined &&
      nowMs < previousExpiresAt
    )
      return { clientId, enterpriseId, secretExpiresAt: previousExpiresAt };
    return null;
  }
}

/** A secret with 256 random bits, base64url (43 characters). */
function generateSecret(): string {
  return randomId(32);
}

function defaultUsername(enterpriseName: string): string {
  const slug = enterpriseName
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${slug || 'client'}-${randomId(6)
    .replace(/[^A-Za-z0-9]/g, 'x')
    .toLowerCase()}`;
}

function storedHash(ctx: DomainContext, password: string): string {
  return secretHash(clientSecretPepper(ctx.config.secretKey), password).toString('base64url');
}

/**
 * Creates an API client for the enterprise. Without a username one is made from the enterprise's
 * name. Returns the secret, which cannot be shown again. 409 when the username is taken.
 */
export async function createClient(
  ctx: DomainContext,
  enterpriseId: string,
  options: { username?: string } = {},
): Promise<NewApiClient> {
  const enterprise = await getEnterprise(ctx, enterpriseId);
  const username = options.username ?? defaultUsername(enterprise.name);
  if (!USERNAME.test(username)) {
    throw new InvalidArgumentError('username: 1 to 64 letters, digits, ".", "_", "@" or "-"');
  }
  const password = generateSecret();
  const row = {
    id: randomId(),
    enterprise_id: enterprise.id,
    username,
    secret_hash: storedHash(ctx, password),
    created_at: ctx.now().toISOString(),
  };
  if (!(await insertApiClient(ctx.db, row))) {
    throw new ConflictError(`API client "${username}" already exists`);
  }
  ctx.clientChanges.publish(username);
  await recordAudit(ctx, ctx.db, clientAudit('client.created', enterprise.id, username));
  return {
    clientId: row.id,
    enterpriseId: enterprise.id,
    username,
    password,
    createdAt: row.created_at,
  };
}

/**
 * Creates the client, or gives an existing one (of the same enterprise) this secret. For secrets
 * that are derived rather than random, such as the demo client's.
 */
export async function upsertClientWithSecret(
  ctx: DomainContext,
  enterpriseId: string,
  username: string,
  password: string,
): Promise<ApiClient> {
  if (!USERNAME.test(username))
    throw new InvalidArgumentError(`username: "${username}" is not valid`);
  const hash = storedHash(ctx, password);
  const existing = await findApiClientByUsername(ctx.db, username);
  if (existing) {
    if (existing.enterprise_id !== enterpriseId) {
      throw new ConflictError(`API client "${username}" belongs to another enterprise`);
    }
    if (existing.secret_hash !== hash) {
      await setApiClientSecretHash(ctx.db, existing.id, hash);
      await recordAudit(ctx, ctx.db, clientAudit('client.secret_rotated', enterpriseId, username));
    }
    ctx.clientChanges.publish(username);
    return { clientId: existing.id, enterpriseId, username, createdAt: existing.created_at };
  }
  const row = {
    id: randomId(),
    enterprise_id: enterpriseId,
    username,
    secret_hash: hash,
    created_at: ctx.now().toISOString(),
  };
  if (!(await insertApiClient(ctx.db, row))) {
    throw new ConflictError(`API client "${username}" already exists`);
  }
  ctx.clientChanges.publish(username);
  await recordAudit(ctx, ctx.db, clientAudit('client.created', enterpriseId, username));
  return { clientId: row.id, enterpriseId, username, createdAt: row.created_at };
}

export async function listClients(ctx: DomainContext, enterpriseId: string): Promise<ApiClient[]> {
  const rows = await listApiClientRows(ctx.db, enterpriseId);
  return rows.map((r) => ({
    clientId: r.id,
    enterpriseId: r.enterprise_id,
    username: r.username,
    createdAt: r.created_at,
  }));
}

/**
 * Deletes a client of the enterprise, named by its id or its username. Its credentials stop
 * working at once in this process, and within the change stamp's bound on every other node.
 */
async function deleteClientWhere(
  ctx: DomainContext,
  enterpriseId: string,
  client: { id: string } | { username: string },
): Promise<void> {
  const username = await deleteApiClientRow(ctx.db, enterpriseId, client);
  if (username === undefined)
    throw NotFoundError.of('API client', 'id' in client ? client.id : client.username);
  ctx.clientChanges.publish(username);
  await recordAudit(ctx, ctx.db, clientAudit('client.deleted', enterpriseId, username));
}

function clientAudit(
  action: 'client.created' | 'client.deleted' | 'client.secret_rotated',
  enterpriseId: string,
  username: string,
) {
  return { action, enterpriseId, target: { type: 'client', id: username } } as const;
}

/** Deletes a client of the enterprise by its id (see deleteClientWhere). */
export function deleteClient(ctx: DomainContext, enterpriseId: string, clientId: string) {
  return deleteClientWhere(ctx, enterpriseId, { id: clientId });
}

/** `pal client delete`: deletes a client of the enterprise by its username. 404: none. */
export function deleteClientByUsername(ctx: DomainContext, enterpriseId: string, username: string) {
  return deleteClientWhere(ctx, enterpriseId, { username });
}

/**
 * `pal client rotate`: gives a client of the enterprise a new generated secret, shown this once.
 * The new secret works at once; the one it replaces keeps working for CLIENT_SECRET_GRACE_SECONDS
 * (any older one stops now), so the client's instances can change over without an outage.
 * 404: no such client in the enterprise.
 */
export async function rotateClientSecret(
  ctx: DomainContext,
  enterpriseId: string,
  username: string,
): Promise<RotatedApiClient> {
  const password = generateSecret();
  const now = ctx.now().getTime();
  const graceMs = ctx.config.clientSecretGraceSeconds * 1000;
  const oldPasswordExpiresAt = new Date(now + graceMs).toISOString();
  const rotated = await rotateApiClientSecret(
    ctx.db,
    enterpriseId,
    username,
    storedHash(ctx, password),
    graceMs > 0 ? oldPasswordExpiresAt : null,
  );
  if (!rotated) throw NotFoundError.of('API client', username);
  ctx.clientChanges.publish(username);
  await recordAudit(ctx, ctx.db, {
    ...clientAudit('client.secret_rotated', enterpriseId, username),
    details: { oldSecretWorksUntil: graceMs > 0 ? oldPasswordExpiresAt : null },
  });
  return { username, password, oldPasswordExpiresAt };
}

/** The stored credential of a username, or undefined (unknown, or not a valid username). */
export async function findClientCredential(
  ctx: Pick<DomainContext, 'db'>,
  username: string,
): Promise<ClientCredential | undefined> {
  if (!USERNAME.test(username)) return undefined;
  const row = await findApiClientByUsername(ctx.db, username);
  if (!row) return undefined;
  const previous =
    row.previous_secret_hash !== null && row.previous_secret_expires_at !== null
      ? {
          previousSecretHash: Buffer.from(row.previous_secret_hash, 'base64url'),
          previousExpiresAt: Date.parse(row.previous_secret_expires_at),
        }
      : {};
  return {
    clientId: row.id,
    enterpriseId: row.enterprise_id,
    secretHash: Buffer.from(row.secret_hash, 'base64url'),
    ...previous,
  };
}

/** The client these credentials belong to, or null; read from the database, never cached. */
export async function verifyClient(
  ctx: Pick<DomainContext, 'db' | 'config'> & Partial<Pick<DomainContext, 'now'>>,
  username: string,
  password: string,
): Promise<AuthenticatedClient | null> {
  const credential = await findClientCredential(ctx, username);
  const checker = new SecretChecker(clientSecretPepper(ctx.config.secretKey));
  return checker.check(credential, password, (ctx.now?.() ?? new Date()).getTime());
}
