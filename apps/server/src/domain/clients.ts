// API clients: the BASIC credentials a client application uses; each belongs to one enterprise.
//
// The service generates every secret (256 random bits), so a slow password hash buys nothing: a
// keyed fast hash cannot be brute-forced without the key. Secrets are stored as
// HMAC-SHA-256(pepper, secret), the pepper derived from PAL_SECRET_KEY with HKDF, and compared in
// constant time. A check costs microseconds: a client row, once seen, is kept in memory, so an
// authenticated request needs no database query (DESIGN §5).
//
// Cache correctness: deleting a client or changing its secret through this module drops the cached
// row at once; changes made by another process (the CLI, another node) are seen within
// CLIENT_CACHE_TTL_MS, after which a cached row is read again.
//
// Failed attempts are throttled per (username, address): see AUTH_THROTTLE.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { DomainContext } from './context.js';
import type { Db } from '../storage/database.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';
import { randomId } from './ids.js';
import { getEnterprise } from './enterprises.js';

/** How long a cached client row is trusted before it is read again. */
export const CLIENT_CACHE_TTL_MS = 10_000;

/** Verified Authorization headers kept at the most (then the map starts afresh). */
const VERIFIED_HEADERS_MAX = 10_000;

/**
 * The failed-attempt throttle: after `maxFailures` wrong credentials for one (username, address)
 * within `windowSeconds`, that pair's wrong credentials are refused with 429 and Retry-After
 * until the window ends; the right secret is still accepted. A success clears the pair's count.
 */
export const AUTH_THROTTLE = {
  maxFailures: 10,
  windowSeconds: 300,
  maxTrackedKeys: 100_000,
} as const;

const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;
const MAX_SECRET_LENGTH = 1024;

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

/** The key that protects stored client secrets, derived from the server key. */
export function clientSecretPepper(secretKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'pal-workflow', 'api-client-secret-pepper', 32));
}

function secretHash(pepper: Buffer, secret: string): Buffer {
  return createHmac('sha256', pepper).update(secret, 'utf8').digest();
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
    secret_hash: secretHash(ctx.clients.pepper, password).toString('base64url'),
    created_at: ctx.now().toISOString(),
  };
  const result = await ctx.db
    .insertInto('api_clients')
    .values(row)
    .onConflict((oc) => oc.column('username').doNothing())
    .executeTakeFirst();
  if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) {
    throw new ConflictError(`API client "${username}" already exists`);
  }
  ctx.clients.forget(username);
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
  const hash = secretHash(ctx.clients.pepper, password).toString('base64url');
  const existing = await ctx.db
    .selectFrom('api_clients')
    .selectAll()
    .where('username', '=', username)
    .executeTakeFirst();
  ctx.clients.forget(username);
  if (existing) {
    if (existing.enterprise_id !== enterpriseId) {
      throw new ConflictError(`API client "${username}" belongs to another enterprise`);
    }
    if (existing.secret_hash !== hash) {
      await ctx.db
        .updateTable('api_clients')
        .set({ secret_hash: hash })
        .where('id', '=', existing.id)
        .execute();
    }
    return { clientId: existing.id, enterpriseId, username, createdAt: existing.created_at };
  }
  const row = {
    id: randomId(),
    enterprise_id: enterpriseId,
    username,
    secret_hash: hash,
    created_at: ctx.now().toISOString(),
  };
  await ctx.db.insertInto('api_clients').values(row).execute();
  return { clientId: row.id, enterpriseId, username, createdAt: row.created_at };
}

export async function listClients(ctx: DomainContext, enterpriseId: string): Promise<ApiClient[]> {
  const rows = await ctx.db
    .selectFrom('api_clients')
    .select(['id', 'enterprise_id', 'username', 'created_at'])
    .where('enterprise_id', '=', enterpriseId)
    .orderBy('username')
    .execute();
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
  const row = await ctx.db
    .deleteFrom('api_clients')
    .where('id', '=', clientId)
    .where('enterprise_id', '=', enterpriseId)
    .returning('username')
    .executeTakeFirst();
  if (!row) throw NotFoundError.of('API client', clientId);
  ctx.clients.forget(row.username);
}

interface CachedClient {
  clientId: string;
  enterpriseId: string;
  hash: Buffer;
  loadedAt: number;
}

interface Attempts {
  failures: number;
  windowStart: number;
}

/**
 * Checks BASIC credentials against the api_clients table, with a per-process cache of client rows
 * and the failed-attempt throttle. One per process (DomainContext.clients).
 */
export class ClientAuthenticator {
  readonly pepper: Buffer;
  private readonly cache = new Map<string, CachedClient>();
  private readonly attempts = new Map<string, Attempts>();
  /**
   * Authorization header values verified within CLIENT_CACHE_TTL_MS, so a returning client costs a
   * map look-up instead of an HMAC. The values hold secrets, as the requests themselves do, and live
   * only in this process's memory; they expire like the client rows and go with `forget`.
   */
  private readonly verified = new Map<
    string,
    { client: AuthenticatedClient; username: string; at: number }
  >();
  private readonly now: () => number;
  // Compared against when the username is unknown, so both paths do the same work.
  private readonly dummyHash: Buffer;

  constructor(
    private readonly db: Db,
    secretKey: Buffer,
    options: { now?: () => number } = {},
  ) {
    this.pepper = clientSecretPepper(secretKey);
    this.now = options.now ?? Date.now;
    this.dummyHash = secretHash(this.pepper, randomId(32));
  }

  /**
   * The client these credentials belong to, or null. With `address`, a failure counts towards
   * the throttle of (username, address) and a success clears it.
   */
  async authenticate(
    username: string,
    password: string,
    address?: string,
  ): Promise<AuthenticatedClient | null> {
    const client = await this.lookup(username);
    const tooLong = password.length > MAX_SECRET_LENGTH;
    const given = secretHash(this.pepper, tooLong ? '' : password);
    const matches = timingSafeEqual(given, client?.hash ?? this.dummyHash);
    const ok = matches && client !== undefined && !tooLong;
    if (address !== undefined) {
      const key = throttleKey(username, address);
      if (ok) this.attempts.delete(key);
      else this.recordFailure(key);
    }
    return ok && client ? { clientId: client.clientId, enterpriseId: client.enterpriseId } : null;
  }

  /** The client of an Authorization header verified lately, if any (see `verified`). */
  verifiedHeader(header: string): { client: AuthenticatedClient; username: string } | undefined {
    const entry = this.verified.get(header);
    if (!entry) return undefined;
    if (this.now() - entry.at >= CLIENT_CACHE_TTL_MS) {
      this.verified.delete(header);
      return undefined;
    }
    return entry;
  }

  /** Remembers an Authorization header that `authenticate` accepted. */
  rememberHeader(header: string, username: string, client: AuthenticatedClient): void {
    if (this.verified.size >= VERIFIED_HEADERS_MAX) this.verified.clear();
    this.verified.set(header, { client, username, at: this.now() });
  }

  /** True when some (username, address) pair has failed lately: only then is the throttle consulted. */
  get hasFailures(): boolean {
    return this.attempts.size > 0;
  }

  /** Seconds until `key` may try again; 0 when it is not throttled. */
  isThrottled(key: string): number {
    const entry = this.attempts.get(key);
    if (!entry) return 0;
    const elapsed = this.now() - entry.windowStart;
    const windowMs = AUTH_THROTTLE.windowSeconds * 1000;
    if (elapsed >= windowMs) {
      this.attempts.delete(key);
      return 0;
    }
    return entry.failures >= AUTH_THROTTLE.maxFailures ? Math.ceil((windowMs - elapsed) / 1000) : 0;
  }

  /** Counts a failed attempt of `key` (see throttleKey). */
  recordFailure(key: string): void {
    const now = this.now();
    const entry = this.attempts.get(key);
    if (entry && now - entry.windowStart < AUTH_THROTTLE.windowSeconds * 1000) {
      entry.failures += 1;
      return;
    }
    if (this.attempts.size >= AUTH_THROTTLE.maxTrackedKeys) this.sweep(now);
    this.attempts.set(key, { failures: 1, windowStart: now });
  }

  /** Clears the failed attempts of `key`. */
  resetFailures(key: string): void {
    this.attempts.delete(key);
  }

  /** Drops a cached client row, so the next check reads the database. */
  forget(username: string): void {
    this.cache.delete(username);
    for (const [header, entry] of this.verified)
      if (entry.username === username) this.verified.delete(header);
  }

  private sweep(now: number): void {
    const windowMs = AUTH_THROTTLE.windowSeconds * 1000;
    for (const [key, entry] of this.attempts) {
      if (now - entry.windowStart >= windowMs) this.attempts.delete(key);
    }
    // Still full (an attack from many addresses): forget the oldest tenth.
    if (this.attempts.size >= AUTH_THROTTLE.maxTrackedKeys) {
      let drop = Math.ceil(AUTH_THROTTLE.maxTrackedKeys / 10);
      for (const key of this.attempts.keys()) {
        if (drop-- <= 0) break;
        this.attempts.delete(key);
      }
    }
  }

  private async lookup(username: string): Promise<CachedClient | undefined> {
    const cached = this.cache.get(username);
    const now = this.now();
    if (cached && now - cached.loadedAt < CLIENT_CACHE_TTL_MS) return cached;
    if (!USERNAME.test(username)) return undefined;
    const row = await this.db
      .selectFrom('api_clients')
      .select(['id', 'enterprise_id', 'secret_hash'])
      .where('username', '=', username)
      .executeTakeFirst();
    if (!row) {
      this.cache.delete(username);
      return undefined;
    }
    const entry = {
      clientId: row.id,
      enterpriseId: row.enterprise_id,
      hash: Buffer.from(row.secret_hash, 'base64url'),
      loadedAt: now,
    };
    this.cache.set(username, entry);
    return entry;
  }
}

/** The throttle key of one username from one network address. */
export function throttleKey(username: string, address: string): string {
  return `${address}\u0000${username}`;
}
