// Verified API-client credentials, cached so that an authenticated request needs no database
// query (docs/decisions.md, "Tenancy and authentication"), and the failed sign-in throttle. One per
// app (buildApp).
//
// Cache correctness: a client created, changed or deleted by this process is dropped at once (the
// domain's clientChanges feed); a change made by another process (the CLI, another node) moves the
// database's change stamp, and everything cached is dropped when it moves: within the dialect's
// changeStampBoundMs (250 ms on PostgreSQL, 1 ms on SQLite). Reading the stamp costs no query per
// request (the dialect polls it, or reads SQLite's data_version at most once a millisecond). While
// the stamp cannot be read, nothing is cached. CLIENT_CACHE_TTL_MS is a second line only.
import {
  clientSecretPepper,
  findClientCredential,
  SecretChecker,
  type AuthenticatedClient,
  type ClientCredential,
} from '../domain/clients.js';
import type { DomainContext } from '../domain/context.js';
import { dialectOf } from '../storage/adapter-dialect.js';
import type { StorageDialect } from '../storage/storage-dialect.js';
import { SignInThrottle } from './sign-in-throttle.js';

/**
 * How long a cached client row (or verified header) is trusted at the most: a second line behind
 * the change stamp, which drops them far sooner when the client changes.
 */
export const CLIENT_CACHE_TTL_MS = 10_000;

/** Verified Authorization headers kept at the most (then the map starts afresh). */
const VERIFIED_HEADERS_MAX = 10_000;

interface CachedCredential {
  credential: ClientCredential;
  loadedAt: number;
}

export class ClientCredentials {
  readonly throttle: SignInThrottle;
  private readonly rows = new Map<string, CachedCredential>();
  /**
   * Authorization header values verified within CLIENT_CACHE_TTL_MS, so a returning client costs a
   * map look-up instead of an HMAC. The values hold secrets, as the requests themselves do, and live
   * only in this process's memory; they expire like the client rows (or when a rotated secret's
   * grace period ends, if sooner) and go with `forget`.
   */
  private readonly verified = new Map<
    string,
    { client: AuthenticatedClient; username: string; until: number }
  >();
  private readonly checker: SecretChecker;
  private readonly now: () => number;
  private readonly unsubscribe: () => void;
  private readonly dialect: StorageDialect;
  /** The shared change stamp that `rows` and `verified` were read under. */
  private stamp: string | undefined;
  /** Moves with every `forget`, so a row read before it is not cached after it. */
  private generation = 0;

  constructor(private readonly domain: DomainContext) {
    this.now = () => domain.now().getTime();
    this.dialect = dialectOf(domain.db);
    this.checker = new SecretChecker(clientSecretPepper(domain.config.secretKey));
    this.throttle = new SignInThrottle(domain);
    this.unsubscribe = domain.clientChanges.subscribe((username) => this.forget(username));
  }

  /** The client these credentials belong to, or null. The caller counts failures (`throttle`). */
  async authenticate(username: string, password: string): Promise<AuthenticatedClient | null> {
    return (await this.check(username, password)).client;
  }

  /**
   * The client these credentials belong to (or null), and whether the username is a client's at
   * all (`known`): a wrong secret for a client is counted, a guess at a username that is nobody's
   * is not (http/authenticate.ts).
   */
  async check(
    username: string,
    password: string,
  ): Promise<{ client: AuthenticatedClient | null; known: boolean }> {
    const credential = await this.lookup(username, this.snapshot());
    return {
      client: this.checker.check(credential, password, this.now()),
      known: credential !== undefined,
    };
  }

  /** The client of an Authorization header verified lately, if any (see `verified`). */
  verifiedHeader(header: string): { client: AuthenticatedClient; username: string } | undefined {
    if (this.snapshot() === undefined) return undefined;
    const entry = this.verified.get(header);
    if (!entry) return undefined;
    if (this.now() >= entry.until) {
      this.verified.delete(header);
      return undefined;
    }
    return entry;
  }

  /**
   * What the cache is valid for now: the database's change stamp and this process's own changes.
   * Take it before `authenticate` and give it to `rememberHeader`. Undefined: do not cache.
   * Drops everything cached when the stamp moved since the last call.
   */
  snapshot(): string | undefined {
    const stamp = this.dialect.sharedChangeStamp(this.domain.db);
    if (stamp !== this.stamp) {
      this.rows.clear();
      this.verified.clear();
      this.stamp = stamp;
    }
    return stamp === undefined ? undefined : `${stamp}/${this.generation}`;
  }

  /**
   * Remembers an Authorization header that `authenticate` accepted, unless the client may have
   * changed since `snapshot` (taken before authenticate) was: then it would remember a secret
   * that the database may no longer hold.
   */
  rememberHeader(
    header: string,
    username: string,
    client: AuthenticatedClient,
    snapshot: string | undefined,
  ): void {
    if (snapshot === undefined || this.snapshot() !== snapshot) return;
    if (this.verified.size >= VERIFIED_HEADERS_MAX) this.verified.clear();
    // A secret in its rotation grace period is remembered no longer than it works.
    const until = Math.min(this.now() + CLIENT_CACHE_TTL_MS, client.secretExpiresAt ?? Infinity);
    this.verified.set(header, { client, username, until });
  }

  /** Drops what is cached of a username, so the next check reads the database. */
  forget(username: string): void {
    this.generation += 1;
    this.rows.delete(username);
    for (const [header, entry] of this.verified)
      if (entry.username === username) this.verified.delete(header);
  }

  /** Stops listening to the domain's changes (the app is closing). */
  close(): void {
    this.unsubscribe();
  }

  private async lookup(
    username: string,
    snapshot: string | undefined,
  ): Promise<ClientCredential | undefined> {
    const cached = this.rows.get(username);
    const now = this.now();
    if (snapshot !== undefined && cached && now - cached.loadedAt < CLIENT_CACHE_TTL_MS)
      return cached.credential;
    const credential = await findClientCredential(this.domain, username);
    // Kept only when nothing changed while it loaded (it might be the row before the change).
    if (credential && snapshot !== undefined && this.snapshot() === snapshot)
      this.rows.set(username, { credential, loadedAt: now });
    else this.rows.delete(username);
    return credential;
  }
}
