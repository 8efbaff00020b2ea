// Rate limits (docs/decisions.md, "Rate limits"): every request but /healthz is counted, against
// its API client when it has valid credentials (policy "client"), else against its address
// (policy "address"), in fixed windows of RATE_LIMIT_WINDOW_SECONDS. Over the limit: 429 with
// Retry-After and the errorResult type RATE_LIMITED. Every counted answer carries the
// RateLimit-Policy and RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11.
//
// The counting is rate-limiter-flexible's: in memory on SQLite (per process), in PostgreSQL's
// `rate_limits` table when the nodes share a database (storage/rate-counts.ts), with a memory
// limiter standing in while PostgreSQL cannot be reached (a limit is no reason to fail requests).
import { HttpError } from '@pal-workflow/server-skeleton';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { RateLimitConfig } from '../config.js';
import { RATE_COUNT_TABLE } from '../storage/rate-counts.js';

/** Whose requests a count is of: an API client's, or an address's without valid credentials. */
export type RatePolicy = 'client' | 'address';

/** Where a request stands in its policy's window, as its answer tells it. */
export interface RateStanding {
  policy: RatePolicy;
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

export class RateLimits {
  private readonly limiters: Record<RatePolicy, RateLimiterAbstract>;
  private readonly quota: Record<RatePolicy, number>;

  /** `pool`: PostgreSQL's shared counts (storage/rate-counts.ts); without it, this process's memory. */
  constructor(
    private readonly config: RateLimitConfig,
    private readonly pool?: pg.Pool,
  ) {
    this.quota = { client: config.clientRequests, address: config.addressRequests };
    this.limiters = { client: this.limiter('client'), address: this.limiter('address') };
  }

  /** Gives every request of `app` its place for a standing: call before any route is added. */
  static decorate(app: FastifyInstance): void {
    app.decorateRequest('rateStanding', null);
  }

  /**
   * Counts one request of `key` (a client id, or addressKey()) under `policy`, and keeps the
   * standing for the answer's headers (writeHeaders). Over the limit: throws 429 RATE_LIMITED.
   */
  async count(request: FastifyRequest, policy: RatePolicy, key: string): Promise<void> {
    let result: RateLimiterRes;
    let over = false;
    try {
      result = await this.limiters[policy].consume(key);
    } catch (error) {
      // The library rejects with the standing when the limit is reached; anything else is a fault.
      if (!(error instanceof RateLimiterRes)) throw error;
      result = error;
      over = true;
    }
    const resetSeconds = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    request.rateStanding = { policy, remaining: result.remainingPoints, resetSeconds };
    if (over)
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
    const name = `"${standing.policy}"`;
    reply.header(
      'RateLimit-Policy',
      `${name};q=${this.quota[standing.policy]};w=${this.config.windowSeconds}`,
    );
    reply.header('RateLimit', `${name};r=${standing.remaining};t=${standing.resetSeconds}`);
  }

  /** Ends the shared counts' pool (the app is closing). */
  async close(): Promise<void> {
    await this.pool?.end();
  }

  private limiter(policy: RatePolicy): RateLimiterAbstract {
    const options = {
      keyPrefix: policy,
      points: this.quota[policy],
      duration: this.config.windowSeconds,
    };
    if (!this.pool) return new RateLimiterMemory(options);
    return new RateLimiterPostgres({
      ...options,
      storeClient: this.pool,
      storeType: 'pool',
      tableName: RATE_COUNT_TABLE,
      tableCreated: true, // by migration 0007
      // Once over its limit on this node, a key is refused from memory until its window ends:
      // a flood of refused requests costs no query.
      inMemoryBlockOnConsumed: this.quota[policy] + 1,
      insuranceLimiter: new RateLimiterMemory(options),
    });
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
