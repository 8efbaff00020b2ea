// Verified API-client credentials, cached so that an authenticated request needs no database
// query (DESIGN §5), and the failed sign-in throttle. One per app (buildApp).
//
// Cache correctness: a client created, changed or deleted by this process is dropped at once (the
// domain's clientChanges feed); changes made by another process (the CLI, another node) are seen
// within CLIENT_CACHE_TTL_MS, after which a cached row is read again.
import {
  clientSecretPepper,
  findClientCredential,
  SecretChecker,
  type AuthenticatedClient,
  type ClientCredential,
} from '../domain/clients.js';
import type { DomainContext } from '../domain/context.js';
import { SignInThrottle, throttleKey } from './sign-in-throttle.js';

/** How long a cached client row (or verified header) is trusted before it is read again. */
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
   * only in this process's memory; they expire like the client rows and go with `forget`.
   */
  private readonly verified = new Map<
    string,
    { client: AuthenticatedClient; username: string; at: number }
  >();
  private readonly checker: SecretChecker;
  private readonly now: () => number;
  private readonly unsubscribe: () => void;

  constructor(private readonly domain: DomainContext) {
    this.now = () => domain.now().getTime();
    this.checker = new SecretChecker(clientSecretPepper(domain.config.secretKey));
    this.throttle = new SignInThrottle(this.now);
    this.unsubscribe = domain.clientChanges.subscribe((username) => this.forget(username));
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
    const credential = await this.lookup(username);
    const ok = this.checker.matches(credential, password);
    if (address !== undefined) {
      const key = throttleKey(username, address);
      if (ok) this.throttle.resetFailures(key);
      else this.throttle.recordFailure(key);
    }
    return ok && credential
      ? { clientId: credential.clientId, enterpriseId: credential.enterpriseId }
      : null;
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

  /** Drops what is cached of a username, so the next check reads the database. */
  forget(username: string): void {
    this.rows.delete(username);
    for (const [header, entry] of this.verified)
      if (entry.username === username) this.verified.delete(header);
  }

  /** Stops listening to the domain's changes (the app is closing). */
  close(): void {
    this.unsubscribe();
  }

  private async lookup(username: string): Promise<ClientCredential | undefined> {
    const cached = this.rows.get(username);
    const now = this.now();
    if (cached && now - cached.loadedAt < CLIENT_CACHE_TTL_MS) return cached.credential;
    const credential = await findClientCredential(this.domain, username);
    if (credential) this.rows.set(username, { credential, loadedAt: now });
    else this.rows.delete(username);
    return credential;
  }
}
