// Where the rate limits' counts live (http/rate-limits.ts). On PostgreSQL the nodes share them in
// the unlogged table `rate_limits` (migration 0007), which rate-limiter-flexible's PostgreSQL
// store reads and writes with one upsert at a time per key (http/shared-rate-count.ts). It gets a
// pool of its own: those writes then neither wait for the data queries' connections nor count as
// this node's writes (which would move the read cache's change stamp on every request). SQLite keeps no table: each
// process counts in memory.
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';

/** The table rate-limiter-flexible's PostgreSQL store uses (its layout is the store's own). */
export const RATE_COUNT_TABLE = 'rate_limits';

/** How long a request's count waits for a connection before it is counted in memory. */
export const CONNECT_TIMEOUT_MS = 1000;

/** The rate counts' own pool on PostgreSQL (as many connections as DATABASE_POOL_SIZE); none on SQLite. */
export function openRateCountPool(database: DatabaseConfig): pg.Pool | undefined {
  if (database.kind !== 'postgres') return undefined;
  const pool = new pg.Pool({
    connectionString: database.url,
    max: database.poolSize,
    // While PostgreSQL cannot be reached, requests are counted in memory once this has passed
    // (a request may wait for the attempt before its own): short, so that they are not held long.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // A dropped idle connection must not end the process; the next query reconnects.
  pool.on('error', () => {});
  return pool;
}
