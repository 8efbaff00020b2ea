// Random identifiers and single-use tokens, and how tokens are stored (docs/entry.md).
import { createHash, randomFillSync } from 'node:crypto';

// Random bytes are drawn from the system's CSPRNG a few KiB at a time and each byte handed out
// once, as Node's randomUUID does: a call to the CSPRNG per id cost about 4 µs of every write.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

function randomText(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new RangeError(`${bytes}: not a byte count`);
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.alloc(bytes)).toString('base64url');
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const text = pool.toString('base64url', used, used + bytes);
  used += bytes;
  return text;
}

/** An opaque id: `bytes` random bytes (default 16 = 128 bits) as base64url (22 characters). */
export function randomId(bytes = 16): string {
  return randomText(bytes);
}

/** A single-use token: 256 random bits, base64url (43 characters). Shown once, stored hashed. */
export function newToken(): string {
  return randomText(32);
}

/** The stored form of a token: SHA-256, base64url. Tokens are random, so no salt or stretching. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/** Plausible token syntax (43 base64url characters); anything else is unknown without a lookup. */
export function looksLikeToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}
