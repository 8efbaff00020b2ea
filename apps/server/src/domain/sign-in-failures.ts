// The failed sign-in throttle's counts (docs/decisions.md, "Tenancy and authentication"): after
// AUTH_THROTTLE.maxFailures wrong credentials for one (username, address) within
// AUTH_THROTTLE.windowSeconds, that pair's wrong credentials are refused with 429 and Retry-After
// until the window ends (http/authenticate.ts). Counted in the database, so that guesses spread
// over several nodes add up.
import { createHash } from 'node:crypto';
import {
  deleteSignInFailures,
  deleteSignInFailuresBefore,
  findSignInFailures,
  recordSignInFailure,
} from '../storage/sign-in-failures.js';
import { isClientUsername } from './clients.js';
import type { DomainContext } from './context.js';
import { inSweepBatches } from './sweep-batches.js';

export const AUTH_THROTTLE = {
  maxFailures: 10,
  windowSeconds: 300,
} as const;

const WINDOW_MS = AUTH_THROTTLE.windowSeconds * 1000;

/** The longest address kept as given (IPv6 text is at most 45 characters). */
const MAX_ADDRESS_LENGTH = 64;

/**
 * A username as stored: as given when it could be a client's; otherwise (any text a header may
 * carry: thousands of characters, NUL, which PostgreSQL's text refuses) `~` and its SHA-256,
 * bounded and unable to meet a client's username (`~` is not in one).
 */
function storedUsername(username: string): string {
  return isClientUsername(username) ? username : `~${sha256(username)}`;
}

function storedAddress(address: string): string {
  return address.length <= MAX_ADDRESS_LENGTH && !address.includes('\u0000')
    ? address
    : `~${sha256(address)}`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}

/** Whole seconds until the window that began at `windowStart` ends; 0 when it has ended. */
function secondsLeft(windowStart: string, now: number): number {
  const left = Date.parse(windowStart) + WINDOW_MS - now;
  return left > 0 ? Math.ceil(left / 1000) : 0;
}

/**
 * Counts a failed sign-in of (username, address). Answers the seconds the pair must wait when it
 * had reached the limit before this failure (then the attempt is refused with 429), else 0. Once
 * the pair is throttled its row is no longer written: its count stops at maxFailures + 1.
 */
export async function recordFailedSignIn(
  ctx: DomainContext,
  username: string,
  address: string,
): Promise<number> {
  const now = ctx.now().getTime();
  const user = storedUsername(username);
  const from = storedAddress(address);
  const window = await recordSignInFailure(
    ctx.db,
    user,
    from,
    new Date(now).toISOString(),
    new Date(now - WINDOW_MS).toISOString(),
    AUTH_THROTTLE.maxFailures,
  );
  if (window)
    return window.failures > AUTH_THROTTLE.maxFailures ? secondsLeft(window.window_start, now) : 0;
  // Throttled already: the row was left alone; its window says how long to wait (0, when a
  // success cleared it in between: the attempt is then an ordinary failure).
  const throttled = await findSignInFailures(ctx.db, user, from);
  return throttled ? secondsLeft(throttled.window_start, now) : 0;
}

/** Seconds until the pair's wrong credentials are heard again; 0 when it is not throttled. */
export async function failedSignInWait(
  ctx: DomainContext,
  username: string,
  address: string,
): Promise<number> {
  const window = await findSignInFailures(ctx.db, storedUsername(username), storedAddress(address));
  if (!window || window.failures < AUTH_THROTTLE.maxFailures) return 0;
  return secondsLeft(window.window_start, ctx.now().getTime());
}

/** Forgets the pair's failures (it signed in with the right secret). */
export function clearFailedSignIns(
  ctx: DomainContext,
  username: string,
  address: string,
): Promise<void> {
  return deleteSignInFailures(ctx.db, storedUsername(username), storedAddress(address));
}

/** Removes the counts of windows that have ended; how many. Part of the server's sweep. */
export function sweepFailedSignIns(ctx: DomainContext): Promise<number> {
  const before = new Date(ctx.now().getTime() - WINDOW_MS).toISOString();
  return inSweepBatches((limit) => deleteSignInFailuresBefore(ctx.db, before, limit));
}
