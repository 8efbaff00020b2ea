// The failed sign-in throttle: after `maxFailures` wrong credentials for one (username, address)
// within `windowSeconds`, that pair's wrong credentials are refused with 429 and Retry-After until
// the window ends; the right secret is still accepted. A success clears the pair's count. Kept in
// this process's memory.

export const AUTH_THROTTLE = {
  maxFailures: 10,
  windowSeconds: 300,
  maxTrackedKeys: 100_000,
} as const;

interface Attempts {
  failures: number;
  windowStart: number;
}

/** The throttle key of one username from one network address. */
export function throttleKey(username: string, address: string): string {
  return `${address}\u0000${username}`;
}

export class SignInThrottle {
  private readonly attempts = new Map<string, Attempts>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when some pair has failed lately: only then is the throttle worth consulting. */
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
}
