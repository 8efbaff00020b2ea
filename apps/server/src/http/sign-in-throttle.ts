// The failed sign-in throttle as the authentication hook uses it. The counts live in the database
// (domain/sign-in-failures.ts), shared by every node, so that spreading guesses over nodes gains
// nothing. Only a failed attempt, and the first success of a pair after it failed on this node,
// touch the database: a request with the right secret normally costs nothing here.
import { createHash } from 'node:crypto';
import {
  AUTH_THROTTLE,
  clearFailedSignIns,
  failedSignInWait,
  recordFailedSignIn,
} from '../domain/sign-in-failures.js';
import type { DomainContext } from '../domain/context.js';

export { AUTH_THROTTLE };

/** Pairs remembered as having failed here at the most (then the oldest tenth is forgotten). */
const MAX_FAILED_HERE = 100_000;

export class SignInThrottle {
  /**
   * The pairs that failed on this node within the window (key → when): a success of one of them
   * clears the shared count. A success of a pair that failed only on other nodes does not (it
   * cannot know of them without a query per success); that count ends with its window.
   */
  private readonly failedHere = new Map<string, number>();
  /**
   * The pairs this node saw throttled (key → when their window ends): their further wrong
   * attempts are answered 429 from here, without touching the database.
   */
  private readonly throttledHere = new Map<string, number>();

  /**
   * Wrong attempts of usernames that are nobody's, on this node (key → the window's start and its
   * count): counted as a client's are, so that the 429 after AUTH_THROTTLE.maxFailures tells no
   * stranger which usernames exist. In memory only: such a guess has no account to protect, and a
   * durable write per guess would let anyone slow every tenant down.
   */
  private readonly unknownFailures = new Map<string, { start: number; failures: number }>();

  constructor(private readonly domain: DomainContext) {}

  /**
   * As recordFailure, for a username that is nobody's: the seconds to put in Retry-After once
   * the pair had reached the limit in its window (the attempt gets 429), else 0.
   */
  recordUnknownFailure(username: string, address: string): number {
    const key = pairKey(username, address);
    const now = this.domain.now().getTime();
    const windowMs = AUTH_THROTTLE.windowSeconds * 1000;
    let window = this.unknownFailures.get(key);
    if (window === undefined || now - window.start >= windowMs) {
      if (this.unknownFailures.size >= MAX_FAILED_HERE) forgetOldest(this.unknownFailures);
      window = { start: now, failures: 0 };
    }
    // Re-inserted last: the map stays in order of failure, so the oldest are forgotten first.
    this.unknownFailures.delete(key);
    this.unknownFailures.set(key, window);
    if (window.failures >= AUTH_THROTTLE.maxFailures) {
      return Math.ceil((window.start + windowMs - now) / 1000);
    }
    window.failures += 1;
    return 0;
  }

  /**
   * Counts a failed attempt; answers the seconds to put in Retry-After when the pair had already
   * reached the limit (the attempt gets 429), else 0. A pair known here to be throttled costs no
   * query; one throttled on another node costs one statement that writes nothing.
   */
  async recordFailure(username: string, address: string): Promise<number> {
    const key = pairKey(username, address);
    const now = this.domain.now().getTime();
    const until = this.throttledHere.get(key);
    if (until !== undefined) {
      if (until > now) return Math.ceil((until - now) / 1000);
      this.throttledHere.delete(key);
    }
    const wait = await recordFailedSignIn(this.domain, username, address);
    if (wait > 0) {
      if (this.throttledHere.size >= MAX_FAILED_HERE) this.throttledHere.clear();
      this.throttledHere.set(key, now + wait * 1000);
    }
    this.failedHere.delete(key); // re-inserted last: the map stays in order of failure
    if (this.failedHere.size >= MAX_FAILED_HERE) forgetOldest(this.failedHere);
    this.failedHere.set(key, now);
    return wait;
  }

  /**
   * The pair signed in with the right secret: clears its count when it failed on this node lately
   * (a promise then); otherwise nothing to do, and no promise, so the fast path stays synchronous.
   */
  succeeded(username: string, address: string): Promise<void> | undefined {
    if (this.failedHere.size === 0) return undefined;
    const key = pairKey(username, address);
    this.throttledHere.delete(key);
    const at = this.failedHere.get(key);
    if (at === undefined) return undefined;
    this.failedHere.delete(key);
    if (this.domain.now().getTime() - at >= AUTH_THROTTLE.windowSeconds * 1000) return undefined;
    return clearFailedSignIns(this.domain, username, address);
  }

  /** Seconds until the pair's wrong attempts are heard again; 0 when it is not throttled. */
  wait(username: string, address: string): Promise<number> {
    return failedSignInWait(this.domain, username, address);
  }
}

/** Forgets the oldest tenth of a map kept in order of failure. */
function forgetOldest(map: Map<string, unknown>): void {
  let drop = Math.ceil(MAX_FAILED_HERE / 10);
  for (const key of map.keys()) {
    if (drop-- <= 0) break;
    map.delete(key);
  }
}

/** The map key of a pair: long ones (a username may be any header text) by their hash. */
function pairKey(username: string, address: string): string {
  const key = `${address}\u0000${username}`;
  return key.length <= 200 ? key : createHash('sha256').update(key).digest('base64url');
}
