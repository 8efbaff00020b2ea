// Authenticated encryption under keys derived from PAL_SECRET_KEY: AES-256-GCM, written as
// base64url(12-byte IV ‖ ciphertext ‖ 16-byte tag). Mailed links (mail-links.ts), webhook
// endpoint secrets and queued mails (docs/events.md) are sealed with it, each under a key of
// its own purpose.
import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Derived keys by server key and purpose, made once: every webhook delivery opens its endpoint's
 * secret. A KeyObject, not the key's bytes: a cipher made from bytes checks and copies them each
 * time (14 µs against 3 µs a decryption, measured).
 */
const derivedKeys = new WeakMap<Buffer, Map<string, KeyObject>>();

/** The 32-byte key of one purpose (HKDF-SHA-256 of the server key). */
export function sealingKey(secretKey: Buffer, purpose: string): KeyObject {
  let keys = derivedKeys.get(secretKey);
  if (!keys) derivedKeys.set(secretKey, (keys = new Map()));
  let key = keys.get(purpose);
  if (!key) {
    key = createSecretKey(Buffer.from(hkdfSync('sha256', secretKey, 'pal-workflow', purpose, 32)));
    keys.set(purpose, key);
  }
  return key;
}

export function seal(key: KeyObject, text: string, associated?: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (associated) cipher.setAAD(associated);
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The sealed text, or undefined when it does not open (tampered, truncated, another key). */
export function unseal(key: KeyObject, sealed: string, associated?: Buffer): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(sealed)) return undefined;
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    if (associated) decipher.setAAD(associated);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return undefined;
  }
}
