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
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import {
  deleteApiClientRow,
  findApiClientByUsername,
  insertApiClient,
  listApiClientRows,
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

export interface AuthenticatedClient {
  clientId: string;
  enterpriseId: string;
}

/** What a credential check needs of a client: who it is and its stored secret hash. */
export interface ClientCredential extends AuthenticatedClient {
  secretHash: Buffer;
}

/** The key that protects stored client secrets, derived from the server key. */
export function clientSecretPepper(secretKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'pal-workflow', 'api-client-secret-pepper', 32));
}

function secretHash(pepper: Buffer, secret: string): Buffer {
  return createHmac('sha256', pepper).update(secret, 'utf8').digest();
}

/**
 * Checks a secret against a client's stored hash in constant time. Without a credential (unknown
 * username) a random hash stands in, so both paths do the same work.
 */
export class SecretChecker {
  private readonly dummyHash: Buffer;

  constructor(private readonly pepper: Buffer) {
    this.dummyHash = secretHash(pepper, randomId(32));
  }

  matches(credential: ClientCredential | undefined, password: string): boolean {
    const tooLong = password.length > MAX_SECRET_LENGTH;
    const given = secretHash(this.pepper, tooLong ? '' : password);
    const same = timingSafeEqual(given, credential?.secretHash ?? this.dummyHash);
    return same && credential !== undefined && !tooLong;
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
    if (existing.secret_hash !== hash) await setApiClientSecretHash(ctx.db, existing.id, hash);
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

/** Deletes a client of the enterprise; its credentials stop working at once in this process. */
export async function deleteClient(
  ctx: DomainContext,
  enterpriseId: string,
  clientId: string,
): Promise<void> {
  const username = await deleteApiClientRow(ctx.db, enterpriseId, clientId);
  if (username === undefined) throw NotFoundError.of('API client', clientId);
  ctx.clientChanges.publish(username);
  await recordAudit(ctx, ctx.db, clientAudit('client.deleted', enterpriseId, username));
}

function clientAudit(
  action: 'client.created' | 'client.deleted',
  enterpriseId: string,
  username: string,
) {
  return { action, enterpriseId, target: { type: 'client', id: username } } as const;
}

/** The stored credential of a username, or undefined (unknown, or not a valid username). */
export async function findClientCredential(
  ctx: Pick<DomainContext, 'db'>,
  username: string,
): Promise<ClientCredential | undefined> {
  if (!USERNAME.test(username)) return undefined;
  const row = await findApiClientByUsername(ctx.db, username);
  return (
    row && {
      clientId: row.id,
      enterpriseId: row.enterprise_id,
      secretHash: Buffer.from(row.secret_hash, 'base64url'),
    }
  );
}

/** The client these credentials belong to, or null; read from the database, never cached. */
export async function verifyClient(
  ctx: Pick<DomainContext, 'db' | 'config'>,
  username: string,
  password: string,
): Promise<AuthenticatedClient | null> {
  const credential = await findClientCredential(ctx, username);
  const checker = new SecretChecker(clientSecretPepper(ctx.config.secretKey));
  if (!checker.matches(credential, password) || !credential) return null;
  return { clientId: credential.clientId, enterpriseId: credential.enterpriseId };
}
