// Random identifiers and single-use tokens, and how tokens are stored (docs/entry.md).
import { createHash, randomBytes } from 'node:crypto';

/** An opaque id: `bytes` random bytes (default 16 = 128 bits) as base64url (22 characters). */
export function randomId(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}

/** A single-use token: 256 random bits, base64url (43 characters). Shown once, stored hashed. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a token: SHA-256, base64url. Tokens are random, so no salt or stretching. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/** Plausible token syntax (43 base64url characters); anything else is unknown without a lookup. */
export function looksLikeToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}
