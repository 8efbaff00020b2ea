// How each environment setting is read and checked: the parsers config.ts composes. Each throws
// a ConfigError that names the variable and says why.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { chmodSync, linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { makeFolder } from './folders.js';

/** The file of the embedded mode's generated key, in DATA_DIR. */
const SECRET_KEY_FILE = 'secret.key';

/** Where the secret key came from: PAL_SECRET_KEY, DATA_DIR's key file, or generated now. */
export type SecretKeySource = 'env' | 'file' | 'generated';

export type DatabaseConfig =
  /** `groupCommit`: concurrent transactions share one COMMIT (storage/sqlite-group-commit.ts). */
  | { kind: 'sqlite'; path: string; groupCommit: boolean }
  /** `url` may carry a password: log it through describeConfig() only. */
  | { kind: 'postgres'; url: string; poolSize: number };

/** A setting with a bad value. The message names the variable and says why. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

export function integerSetting(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return fallback;
  const parsed = z.coerce
    .number()
    .int()
    .min(min)
    .max(max)
    .safeParse(/^[+-]?\d+$/.test(raw) ? raw : NaN);
  if (!parsed.success) {
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
  }
  return parsed.data;
}

export function enumSetting<T extends string>(
  name: string,
  raw: string | undefined,
  values: readonly T[],
  fallback: T,
): T {
  if (raw === undefined) return fallback;
  const value = raw.toLowerCase();
  if (!(values as readonly string[]).includes(value)) {
    throw new ConfigError(name, `expected one of ${values.join(', ')}, got "${raw}"`);
  }
  return value as T;
}

export function pathSegment(name: string, raw: string): string {
  const segment = raw.replace(/^\/+|\/+$/g, '');
  if (!/^[A-Za-z0-9._~-]+$/.test(segment) || segment === '.' || segment === '..') {
    throw new ConfigError(
      name,
      `expected one URL path segment (letters, digits, . _ ~ -), got "${raw}"`,
    );
  }
  return segment;
}

export function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an absolute http:// or https:// URL, got "${raw}"`);
  }
  // Every link the service builds from it goes into mails and pages: credentials in it would be
  // handed to every recipient. Said first, and without them (no message shows them).
  if (url.username || url.password) {
    url.username = '';
    url.password = '';
    throw new ConfigError(
      name,
      `must not carry a user name or password (links built from it are mailed to people), got "${url.toString()}" with them`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `expected an http:// or https:// URL, got "${raw}"`);
  }
  if (url.search || url.hash) {
    throw new ConfigError(name, `must not carry a query or fragment, got "${raw}"`);
  }
  return url.toString().replace(/\/+$/, '');
}

export function databaseSetting(
  raw: string | undefined,
  rawPoolSize: string | undefined,
  defaultPoolSize: number,
  dataDir: string,
  rawGroupCommit?: string,
): DatabaseConfig {
  if (raw !== undefined && /^postgres(ql)?:/i.test(raw)) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError(
        'DATABASE_URL',
        'expected postgres://[user[:password]@]host[:port]/database[?options]',
      );
    }
    if (!url.hostname && !url.searchParams.has('host')) {
      throw new ConfigError('DATABASE_URL', 'the PostgreSQL URL names no host');
    }
    if (url.pathname.replace(/^\//, '') === '') {
      throw new ConfigError('DATABASE_URL', 'the PostgreSQL URL names no database (…/DATABASE)');
    }
    // Two at the least: a sweep holds one connection for its lock while its work uses another
    // (storage/postgres.ts, runExclusively).
    const poolSize = integerSetting('DATABASE_POOL_SIZE', rawPoolSize, defaultPoolSize, 2, 1000);
    if (rawGroupCommit !== undefined)
      throw new ConfigError('SQLITE_GROUP_COMMIT', 'applies to a SQLite database only');
    return { kind: 'postgres', url: raw, poolSize };
  }
  if (rawPoolSize !== undefined) {
    throw new ConfigError('DATABASE_POOL_SIZE', 'applies to a PostgreSQL DATABASE_URL only');
  }
  const groupCommit =
    enumSetting('SQLITE_GROUP_COMMIT', rawGroupCommit, ['true', 'false'], 'true') === 'true';
  if (raw === undefined) return { kind: 'sqlite', path: join(dataDir, 'pal.sqlite'), groupCommit };
  const match = /^sqlite:(?:\/\/)?(.+)$/i.exec(raw);
  if (!match) {
    throw new ConfigError(
      'DATABASE_URL',
      `expected sqlite:PATH, postgres://… (or unset), got "${raw}"`,
    );
  }
  const path = match[1];
  return { kind: 'sqlite', path: path === ':memory:' ? path : resolve(path), groupCommit };
}

/** The database setting fit for a log line or a message: a PostgreSQL password masked. */
/** The names of address ranges proxy-addr (Fastify's trustProxy) knows. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * The proxies whose `X-Forwarded-For` (and `-Proto`, `-Host`) is believed: a comma-separated list
 * of addresses, CIDR ranges (`10.0.0.0/8`) or the names loopback, linklocal, uniquelocal.
 * Undefined: none (the address a request comes from is its socket's).
 */
export function trustProxySetting(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, prefix, ...more] = entry.split('/');
    const family = isIP(address ?? '');
    const validPrefix =
      prefix === undefined ||
      (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (PROXY_RANGE_NAMES.includes(entry)) continue;
    if (family === 0 || !validPrefix || more.length > 0)
      throw new ConfigError(
        'TRUST_PROXY',
        `expected addresses, CIDR ranges or ${PROXY_RANGE_NAMES.join(', ')}, separated by commas; got "${entry}"`,
      );
  }
  return entries.length > 0 ? entries : undefined;
}

export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === 'sqlite') return database.path;
  const url = new URL(database.url);
  if (url.password) url.password = '***';
  return url.toString();
}

export function mailUrlSetting(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('MAIL_URL', 'expected smtp://[user:password@]host[:port] or smtps://…');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new ConfigError(
      'MAIL_URL',
      `expected an smtp:// or smtps:// URL, got a ${url.protocol}// URL`,
    );
  }
  if (!url.hostname) throw new ConfigError('MAIL_URL', 'the URL names no host');
  return raw;
}

export function mailFromSetting(raw: string): string {
  // "Name <address>" or a bare address.
  const address = /<([^<>]+)>\s*$/.exec(raw)?.[1] ?? raw;
  // A line break would end the From header and start another (a Bcc) in every mail sent.
  if (/[\u0000-\u001f\u007f]/.test(raw) || !/^[^\s@<>]+@[^\s@<>]+$/.test(address)) {
    throw new ConfigError('MAIL_FROM', `expected an address or "Name <address>", got "${raw}"`);
  }
  return raw;
}

/** Decodes a 32-byte key written as 64 hex digits or as base64 / base64url. */
export function decodeSecretKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) {
    const key = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === 32) return key;
  }
  return undefined;
}

// A DNS name: dot-separated labels of letters, digits and inner hyphens, 253 characters at most.
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * HOST: an IP address, or a host name to resolve. Digits and dots that are no IPv4 address
 * (`999.1.1.1`) are refused as an address, not looked up as a name.
 */
export function hostSetting(raw: string): string {
  if (isIP(raw) !== 0 || (HOST_NAME.test(raw) && !/^[\d.]+$/.test(raw))) return raw;
  throw new ConfigError(
    'HOST',
    `expected an IP address (127.0.0.1, ::) or a host name, got "${raw}"`,
  );
}

/** DATA_DIR, made absolute: a file of that name is refused here rather than met by every use. */
export function dataDirSetting(raw: string): string {
  const dir = resolve(raw);
  let isFolder: boolean | undefined;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch {
    // Absent (it is made when first needed) or not reachable: its first use says which.
  }
  if (isFolder === false) throw new ConfigError('DATA_DIR', `${dir} is a file, not a folder`);
  return dir;
}

export function secretKeySetting(
  raw: string | undefined,
  dataDir: string,
): { key: Buffer; source: SecretKeySource } {
  if (raw !== undefined) {
    const key = decodeSecretKey(raw);
    if (!key) {
      throw new ConfigError(
        'PAL_SECRET_KEY',
        'expected 32 bytes as 64 hex digits or as base64 (e.g. `openssl rand -hex 32`)',
      );
    }
    return { key, source: 'env' };
  }
  // Embedded mode: keep a generated key beside the database, readable by its owner only.
  const file = join(dataDir, SECRET_KEY_FILE);
  const existing = readKeyFile(file);
  if (existing) return { key: existing, source: 'file' };
  const key = randomBytes(32);
  // Written whole to a private temporary file, then linked into place: link() fails if the name
  // exists, so of two processes starting at once one key wins and nobody reads a half-written file.
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    makeFolder(dirname(file), 0o700);
    writeFileSync(temporary, `${key.toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
    chmodSync(temporary, 0o600);
    linkSync(temporary, file);
    return { key, source: 'generated' };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const winner = readKeyFile(file);
      if (winner) return { key: winner, source: 'file' };
    }
    // The folder is what must change (or PAL_SECRET_KEY be given): name it.
    throw new ConfigError(
      'DATA_DIR',
      `PAL_SECRET_KEY is unset, and the key generated for it cannot be kept in ${file}: ${(error as Error).message}`,
    );
  } finally {
    rmSync(temporary, { force: true });
  }
}

export function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(
      'DATA_DIR',
      `PAL_SECRET_KEY is unset, and the key kept for it in ${file} cannot be read: ${(error as Error).message}`,
    );
  }
  const key = decodeSecretKey(text);
  if (!key) {
    throw new ConfigError(
      'PAL_SECRET_KEY',
      `unset, and ${file} does not hold a 32-byte hex or base64 key`,
    );
  }
  return key;
}
