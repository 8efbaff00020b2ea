// Rate limits (docs/decisions.md, "Rate limits"): every request but /healthz is counted, against
// its API client when it has valid credentials (policy "client"), else against its address
// (policy "address"), in fixed windows of RATE_LIMIT_WINDOW_SECONDS. Over the limit: 429 with
// Retry-After and the errorResult type RATE_LIMITED. Every counted answer carries the
// RateLimit-Policy and RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11.
//
// The counting is in memory on SQLite (per process: MemoryWindows below), and rate-limiter-flexible's
// in PostgreSQL's `rate_limits` table when the nodes share a database (storage/rate-counts.ts), one
// upsert at a time per key (shared-rate-count.ts), with its memory limiter standing in while
// PostgreSQL cannot be reached (a limit is no reason to fail requests).
import { HttpError } from '@pal-workflow/server-skeleton';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import type { RateLimitConfig } from '../config.js';
import { RATE_COUNT_TABLE } from '../storage/rate-counts.js';
import { BatchedConsumer, type Counted } from './shared-rate-count.js';
import { AUTH_THROTTLE } from '../domain/sign-in-failures.js';

/** Whose requests a count is of: an API client's, or an address's without valid credentials. */
export type RatePolicy = 'client' | 'address';
/**
 * The policies an answer may name: the two counts, and the sign-in throttle's (wrong secrets of
 * one username from one address, domain/sign-in-failures.ts), whose 429 says its own quota and
 * window rather than the address's.
 */
export type AnsweredPolicy = RatePolicy | 'sign-in';

/** Where a request stands in its policy's window, as its answer tells it. */
export interface RateStanding {
  policy: AnsweredPolicy;
  remaining: number;
  /** Seconds until the window ends. */
  resetSeconds: number;
}

// On the request itself (a decoration, RateLimits.decorate), not in a WeakMap keyed by the
// request: an entry per request costs about 0.6 µs, most of it in the GC.
declare module 'fastify' {
  interface FastifyRequest {
    /** Where the request stands once counted (RateLimits.count); null before. */
    rateStanding: RateStanding | null;
  }
}

/**
 * Fixed windows in this process's memory, counted as rate-limiter-flexible's memory limiter counts
 * them (a key's window starts with its first request; past `points` in it, over), but answered at
 * once: the library answers each count with a promise, and that promise and its hops were most of
 * the limit's cost on every request. Ended windows are swept at most once per window length.
 */
export class MemoryWindows {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private nextSweep = 0;

  constructor(
    private readonly points: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  count(key: string): Counted {
    const now = this.now();
    let window = this.windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      if (now >= this.nextSweep) this.sweep(now);
      window = { count: 0, endsAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return {
      remaining: Math.max(0, this.points - window.count),
      msBeforeNext: window.endsAt - now,
      over: window.count > this.points,
    };
  }

  /** Keys with a window not yet ended. */
  get size(): number {
    return this.windows.size;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    this.nextSweep = now + this.windowMs;
  }
}

export class RateLimits {
  /** PostgreSQL's shared counts; undefined without a pool (then `memory`). */
  readonly shared: Record<RatePolicy, BatchedConsumer> | undefined;
  private readonly memory: Record<RatePolicy, MemoryWindows>;
  private readonly quota: Record<RatePolicy, number>;
  /** Each policy's RateLimit-Policy value and RateLimit prefix: the same on every answer. */
  private readonly policyHeaders: Record<AnsweredPolicy, { policy: string; prefix: string }>;

  /** `pool`: PostgreSQL's shared counts (storage/rate-counts.ts); without it, this process's memory. */
  constructor(
    private readonly config: RateLimitConfig,
    private readonly pool?: pg.Pool,
  ) {
    this.quota = { client: config.clientRequests, address: config.addressRequests };
    const headersOf = (policy: AnsweredPolicy, quota: number, windowSeconds: number) => ({
      policy: `"${policy}";q=${quota};w=${windowSeconds}`,
      prefix: `"${policy}";r=`,
    });
    this.policyHeaders = {
      client: headersOf('client', this.quota.client, config.windowSeconds),
      address: headersOf('address', this.quota.address, config.windowSeconds),
      'sign-in': headersOf('sign-in', AUTH_THROTTLE.maxFailures, AUTH_THROTTLE.windowSeconds),
    };
    const windowMs = config.windowSeconds * 1000;
    this.memory = {
      client: new MemoryWindows(this.quota.client, windowMs),
      address: new MemoryWindows(this.quota.address, windowMs),
    };
    this.shared = pool
      ? { client: this.consumer('client', pool), address: this.consumer('address', pool) }
      : undefined;
  }

  /** Gives every request of `app` its place for a standing: call before any route is added. */
  static decorate(app: FastifyInstance): void {
    app.decorateRequest('rateStanding', null);
  }

  /**
   * Counts one request of `key` (a client id, or addressKey()) under `policy`, and keeps the
   * standing for the answer's headers (writeHeaders). Over the limit: throws 429 RATE_LIMITED
   * (from a promise when the counts are PostgreSQL's; at once when they are in memory).
   */
  count(request: FastifyRequest, policy: RatePolicy, key: string): Promise<void> | undefined {
    if (this.shared === undefined) {
      const counted = this.memory[policy].count(key);
      this.settle(request, policy, counted);
      return undefined;
    }
    return this.shared[policy]
      .consume(key)
      .then((counted) => this.settle(request, policy, counted));
  }

  /**
   * Counts one request of `key` in this process's memory only, never refusing it, and keeps its
   * standing for the answer's headers: for /healthz, which must answer at once and always.
   */
  countHere(request: FastifyRequest, policy: RatePolicy, key: string): void {
    keepStanding(request, policy, this.memory[policy].count(key));
  }

  /**
   * `count` for a hook in callback style: `then` is called with nothing, or with the 429, once the
   * request is counted: at once when the counts are in memory, without a promise.
   */
  countThen(
    request: FastifyRequest,
    policy: RatePolicy,
    key: string,
    then: (limited?: Error) => void,
  ): void {
    let counted: Promise<void> | undefined;
    try {
      counted = this.count(request, policy, key);
    } catch (limited) {
      return then(limited as Error);
    }
    if (counted) counted.then(() => then(), then);
    else then();
  }

  private settle(request: FastifyRequest, policy: RatePolicy, counted: Counted): void {
    const resetSeconds = keepStanding(request, policy, counted);
    if (counted.over)
      throw new HttpError(
        429,
        'RATE_LIMITED',
        `rate limit reached: ${this.quota[policy]} requests per ${this.config.windowSeconds} s ${
          policy === 'client'
            ? 'for this API client'
            : 'from this address without valid credentials'
        }; try again in ${resetSeconds} s`,
        { 'Retry-After': String(resetSeconds) },
      );
  }

  /** Writes RateLimit-Policy and RateLimit on the answer to a counted request. */
  writeHeaders(request: FastifyRequest, reply: FastifyReply): void {
    const standing = request.rateStanding;
    if (!standing) return;
    const headers = this.policyHeaders[standing.policy];
    reply.header('RateLimit-Policy', headers.policy);
    reply.header('RateLimit', `${headers.prefix}${standing.remaining};t=${standing.resetSeconds}`);
  }

  /** Ends the shared counts' pool (the app is closing). */
  async close(): Promise<void> {
    await this.pool?.end();
  }

  private consumer(policy: RatePolicy, pool: pg.Pool): BatchedConsumer {
    const options = {
      keyPrefix: policy,
      points: this.quota[policy],
      duration: this.config.windowSeconds,
    };
    const limiter = new RateLimiterPostgres({
      ...options,
      storeClient: pool,
      storeType: 'pool',
      tableName: RATE_COUNT_TABLE,
      tableCreated: true, // by migration 0007
      // Once over its limit on this node, a key is refused from memory until its window ends:
      // a flood of refused requests costs no query.
      inMemoryBlockOnConsumed: this.quota[policy] + 1,
      insuranceLimiter: new RateLimiterMemory(options),
    });
    return new BatchedConsumer(limiter, this.quota[policy]);
  }
}

/**
 * The key an address is counted under: an IPv4 address as it is (also when it comes as IPv6's
 * `::ffff:a.b.c.d`), an IPv6 address by its /64, the smallest block a host is given (counting each
 * of its 2^64 addresses apart would let one host take them all).
 */
export function addressKey(ip: string): string {
  const address = ip.replace(/%.*$/, ''); // a zone ("fe80::1%eth0") names the local interface only
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  const groups = ipv6Groups(address);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : address;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function ipv6Groups(address: string): string[] | undefined {
  let text = address.toLowerCase();
  // An IPv4 tail ("64:ff9b::192.0.2.1") is two groups.
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...rest];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return groups.map((g) => parseInt(g, 16).toString(16));
}

/** Keeps a count's standing on the request for its answer's headers; returns its seconds left. */
function keepStanding(request: FastifyRequest, policy: RatePolicy, counted: Counted): number {
  const resetSeconds = Math.max(1, Math.ceil(counted.msBeforeNext / 1000));
  request.rateStanding = { policy, remaining: counted.remaining, resetSeconds };
  return resetSeconds;
}
