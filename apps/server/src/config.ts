// Settings of the service, read once from the environment and validated, so a bad value stops
// start-up with a message that names the variable. Every default is written out here; the
// documentation of each setting is docs/configuration.md.
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { defaultRoots } from '@pal-workflow/server-skeleton';
import {
  ConfigError,
  databaseSetting,
  describeDatabase,
  enumSetting,
  httpUrl,
  integerSetting,
  mailFromSetting,
  mailUrlSetting,
  pathSegment,
  secretKeySetting,
  type DatabaseConfig,
  type SecretKeySource,
} from './settings.js';

export { ConfigError, describeDatabase, decodeSecretKey, type DatabaseConfig } from './settings.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

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
  secretKeySource: SecretKeySource;
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
  /** Days an audit record is kept; older ones are swept. */
  auditRetentionDays: number;
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
  AUDIT_RETENTION_DAYS: 365,
} as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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
  const database = databaseSetting(
    get('DATABASE_URL'),
    get('DATABASE_POOL_SIZE'),
    CONFIG_DEFAULTS.DATABASE_POOL_SIZE,
    dataDir,
  );
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
  const auditRetentionDays = integerSetting(
    'AUDIT_RETENTION_DAYS',
    get('AUDIT_RETENTION_DAYS'),
    CONFIG_DEFAULTS.AUDIT_RETENTION_DAYS,
    1,
    36_500,
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
    auditRetentionDays,
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
    auditRetentionDays: config.auditRetentionDays,
    bodyLimitBytes: config.bodyLimitBytes,
    logLevel: config.logLevel,
  };
}

function defaultPublicUrl(host: string, port: number): string {
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${shownHost}:${port}`;
}
