// Settings of the service, read once from the environment and validated, so a bad value stops
// start-up with a message that names the variable. Every default is written out here; the
// documentation of each setting is docs/configuration.md.
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { defaultRoots } from '@pal-workflow/server-skeleton';
import { z } from 'zod';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  /** `url` may carry a password: log it through describeConfig() only. */
  | { kind: 'postgres'; url: string; poolSize: number };

export interface Config {
  host: string;
  port: number;
  /** Base of every link the service sends out (mails, P3 URLs); no trailing slash. */
  publicUrl: string;
  serviceRoot: string;
  userRoot: string;
  /** Absolute path. */
  dataDir: string;
  database: DatabaseConfig;
  /** `smtp://` or `smtps://`; absent: mail goes to `${dataDir}/outbox`. */
  mailUrl?: string;
  mailFrom: string;
  /** 32 bytes. Never log it: use describeConfig(). */
  secretKey: Buffer;
  secretKeySource: 'env' | 'file' | 'generated';
  tokenTtlSeconds: number;
  pageSize: number;
  /** T2 counts matches up to this many; past it X-Total-Count is this, as a lower bound. */
  totalCountCap: number;
  bodyLimitBytes: number;
  logLevel: LogLevel;
  /** Wall time one workflow run may take. */
  workflowTimeoutMs: number;
  /** Memory one workflow run may allocate inside its sandbox. */
  workflowMemoryMb: number;
  /** Worker threads that run workflows. */
  workflowWorkers: number;
}

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

export const CONFIG_DEFAULTS = {
  HOST: '127.0.0.1',
  PORT: 8080,
  SERVICE_ROOT: defaultRoots.service,
  USER_ROOT: defaultRoots.user,
  DATA_DIR: './data',
  MAIL_FROM: 'Pal Workflow <no-reply@localhost>',
  TOKEN_TTL_SECONDS: 60,
  PAGE_SIZE: 100,
  MAX_PAGE_SIZE: 1000,
  TOTAL_COUNT_CAP: 1000,
  BODY_LIMIT_BYTES: 25 * 1024 * 1024,
  LOG_LEVEL: 'info' as LogLevel,
  WORKFLOW_TIMEOUT_MS: 1000,
  WORKFLOW_MEMORY_MB: 64,
  /** Unset: one worker per core. */
  WORKFLOW_WORKERS: undefined,
  DATABASE_POOL_SIZE: 10,
} as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const SECRET_KEY_FILE = 'secret.key';

type Env = Record<string, string | undefined>;

/** Reads and validates every setting. Throws ConfigError on the first bad value. */
export function loadConfig(env: Env = process.env): Config {
  const get = (name: string): string | undefined => {
    // An empty variable counts as unset, as most shells and .env files leave them.
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  const host = get('HOST') ?? CONFIG_DEFAULTS.HOST;
  const port = integerSetting('PORT', get('PORT'), CONFIG_DEFAULTS.PORT, 0, 65535);
  const serviceRoot = pathSegment(
    'SERVICE_ROOT',
    get('SERVICE_ROOT') ?? CONFIG_DEFAULTS.SERVICE_ROOT,
  );
  const userRoot = pathSegment('USER_ROOT', get('USER_ROOT') ?? CONFIG_DEFAULTS.USER_ROOT);
  if (serviceRoot === userRoot) {
    throw new ConfigError('USER_ROOT', `must differ from SERVICE_ROOT (both are "${userRoot}")`);
  }
  const publicUrl = httpUrl('PUBLIC_URL', get('PUBLIC_URL') ?? defaultPublicUrl(host, port));
  const dataDir = resolve(get('DATA_DIR') ?? CONFIG_DEFAULTS.DATA_DIR);
  const database = databaseSetting(get('DATABASE_URL'), get('DATABASE_POOL_SIZE'), dataDir);
  const mailUrl = mailUrlSetting(get('MAIL_URL'));
  const mailFrom = mailFromSetting(get('MAIL_FROM') ?? CONFIG_DEFAULTS.MAIL_FROM);
  const tokenTtlSeconds = integerSetting(
    'TOKEN_TTL_SECONDS',
    get('TOKEN_TTL_SECONDS'),
    CONFIG_DEFAULTS.TOKEN_TTL_SECONDS,
    1,
    86_400,
  );
  const pageSize = integerSetting(
    'PAGE_SIZE',
    get('PAGE_SIZE'),
    CONFIG_DEFAULTS.PAGE_SIZE,
    1,
    CONFIG_DEFAULTS.MAX_PAGE_SIZE,
  );
  const totalCountCap = integerSetting(
    'TOTAL_COUNT_CAP',
    get('TOTAL_COUNT_CAP'),
    CONFIG_DEFAULTS.TOTAL_COUNT_CAP,
    1,
    100_000_000,
  );
  const bodyLimitBytes = integerSetting(
    'BODY_LIMIT_BYTES',
    get('BODY_LIMIT_BYTES'),
    CONFIG_DEFAULTS.BODY_LIMIT_BYTES,
    1024,
    1024 * 1024 * 1024,
  );
  const logLevel = enumSetting(
    'LOG_LEVEL',
    get('LOG_LEVEL'),
    LOG_LEVELS,
    CONFIG_DEFAULTS.LOG_LEVEL,
  );
  const workflowTimeoutMs = integerSetting(
    'WORKFLOW_TIMEOUT_MS',
    get('WORKFLOW_TIMEOUT_MS'),
    CONFIG_DEFAULTS.WORKFLOW_TIMEOUT_MS,
    10,
    600_000,
  );
  const workflowMemoryMb = integerSetting(
    'WORKFLOW_MEMORY_MB',
    get('WORKFLOW_MEMORY_MB'),
    CONFIG_DEFAULTS.WORKFLOW_MEMORY_MB,
    8,
    1024,
  );
  const workflowWorkers = integerSetting(
    'WORKFLOW_WORKERS',
    get('WORKFLOW_WORKERS'),
    availableParallelism(),
    1,
    256,
  );
  // Several nodes share one PostgreSQL database, and each would generate a key of its own.
  if (database.kind === 'postgres' && get('PAL_SECRET_KEY') === undefined) {
    throw new ConfigError(
      'PAL_SECRET_KEY',
      'required with a PostgreSQL DATABASE_URL: every node must use the same key (e.g. `openssl rand -hex 32`)',
    );
  }
  // Last, because in embedded mode it may write DATA_DIR/secret.key: only once everything else is valid.
  const { key: secretKey, source: secretKeySource } = secretKeySetting(
    get('PAL_SECRET_KEY'),
    dataDir,
  );

  return {
    host,
    port,
    publicUrl,
    serviceRoot,
    userRoot,
    dataDir,
    database,
    mailUrl,
    mailFrom,
    secretKey,
    secretKeySource,
    tokenTtlSeconds,
    pageSize,
    totalCountCap,
    bodyLimitBytes,
    logLevel,
    workflowTimeoutMs,
    workflowMemoryMb,
    workflowWorkers,
  };
}

/** The settings without secrets (the key, a password in MAIL_URL), fit for a log line. */
export function describeConfig(config: Config): Record<string, unknown> {
  let mailUrl: string | undefined;
  if (config.mailUrl) {
    const url = new URL(config.mailUrl);
    if (url.password) url.password = '***';
    mailUrl = url.toString();
  }
  return {
    host: config.host,
    port: config.port,
    publicUrl: config.publicUrl,
    serviceRoot: config.serviceRoot,
    userRoot: config.userRoot,
    dataDir: config.dataDir,
    database: describeDatabase(config.database),
    mailUrl: mailUrl ?? '(none: mail goes to the outbox)',
    mailFrom: config.mailFrom,
    secretKey: `(${config.secretKeySource})`,
    tokenTtlSeconds: config.tokenTtlSeconds,
    pageSize: config.pageSize,
    totalCountCap: config.totalCountCap,
    workflowTimeoutMs: config.workflowTimeoutMs,
    workflowMemoryMb: config.workflowMemoryMb,
    workflowWorkers: config.workflowWorkers,
    bodyLimitBytes: config.bodyLimitBytes,
    logLevel: config.logLevel,
  };
}

function defaultPublicUrl(host: string, port: number): string {
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${shownHost}:${port}`;
}

function integerSetting(
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

function enumSetting<T extends string>(
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

function pathSegment(name: string, raw: string): string {
  const segment = raw.replace(/^\/+|\/+$/g, '');
  if (!/^[A-Za-z0-9._~-]+$/.test(segment) || segment === '.' || segment === '..') {
    throw new ConfigError(
      name,
      `expected one URL path segment (letters, digits, . _ ~ -), got "${raw}"`,
    );
  }
  return segment;
}

function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an absolute http:// or https:// URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `expected an http:// or https:// URL, got "${raw}"`);
  }
  if (url.search || url.hash) {
    throw new ConfigError(name, `must not carry a query or fragment, got "${raw}"`);
  }
  return url.toString().replace(/\/+$/, '');
}

function databaseSetting(
  raw: string | undefined,
  rawPoolSize: string | undefined,
  dataDir: string,
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
    const poolSize = integerSetting(
      'DATABASE_POOL_SIZE',
      rawPoolSize,
      CONFIG_DEFAULTS.DATABASE_POOL_SIZE,
      1,
      1000,
    );
    return { kind: 'postgres', url: raw, poolSize };
  }
  if (rawPoolSize !== undefined) {
    throw new ConfigError('DATABASE_POOL_SIZE', 'applies to a PostgreSQL DATABASE_URL only');
  }
  if (raw === undefined) return { kind: 'sqlite', path: join(dataDir, 'pal.sqlite') };
  const match = /^sqlite:(?:\/\/)?(.+)$/i.exec(raw);
  if (!match) {
    throw new ConfigError(
      'DATABASE_URL',
      `expected sqlite:PATH, postgres://… (or unset), got "${raw}"`,
    );
  }
  const path = match[1];
  return { kind: 'sqlite', path: path === ':memory:' ? path : resolve(path) };
}

/** The database setting fit for a log line or a message: a PostgreSQL password masked. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === 'sqlite') return database.path;
  const url = new URL(database.url);
  if (url.password) url.password = '***';
  return url.toString();
}

function mailUrlSetting(raw: string | undefined): string | undefined {
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

function mailFromSetting(raw: string): string {
  // "Name <address>" or a bare address.
  const address = /<([^<>]+)>\s*$/.exec(raw)?.[1] ?? raw;
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(address)) {
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

function secretKeySetting(
  raw: string | undefined,
  dataDir: string,
): { key: Buffer; source: Config['secretKeySource'] } {
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
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, `${key.toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
    chmodSync(temporary, 0o600);
    linkSync(temporary, file);
    return { key, source: 'generated' };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const winner = readKeyFile(file);
      if (winner) return { key: winner, source: 'file' };
    }
    throw new ConfigError(
      'PAL_SECRET_KEY',
      `unset, and the generated key could not be stored in ${file}: ${(error as Error).message}`,
    );
  } finally {
    rmSync(temporary, { force: true });
  }
}

function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(
      'PAL_SECRET_KEY',
      `unset, and ${file} cannot be read: ${(error as Error).message}`,
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
