// Settings of the service, read once from the environment and validated, so a bad value stops
// start-up with a message that names the variable. Every default is written out here; the
// documentation of each setting is docs/configuration.md.
import { availableParallelism } from 'node:os';
import { defaultRoots } from '@pal-workflow/server-skeleton';
import {
  ConfigError,
  dataDirSetting,
  databaseSetting,
  describeDatabase,
  enumSetting,
  hostSetting,
  httpUrl,
  integerSetting,
  mailFromSetting,
  mailUrlSetting,
  pathSegment,
  secretKeySetting,
  trustProxySetting,
  type DatabaseConfig,
  type SecretKeySource,
} from './setting-parsers.js';
import { outboxSettings, type OutboxConfig } from './outbox/settings.js';

export {
  ConfigError,
  describeDatabase,
  decodeSecretKey,
  type DatabaseConfig,
} from './setting-parsers.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  host: string;
  port: number;
  /** Base of every link the service sends out (mails, P3 URLs); no trailing slash. */
  publicUrl: string;
  serviceRoot: string;
  /**
   * Where people reach the service root: PUBLIC_URL's path, then `/{service_root}` (e.g.
   * `/pal/services`; `/services` when PUBLIC_URL has no path). Every address the service writes
   * into a page, a Location or a cookie's Path starts with it. The routes stay at
   * `/{service_root}/…`: a proxy mounted at PUBLIC_URL's path strips it before forwarding.
   */
  publicServicePath: string;
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
  /** How long an API client's old secret keeps working after `pal client rotate`. */
  clientSecretGraceSeconds: number;
  pageSize: number;
  /** T2 counts matches up to this many; past it X-Total-Count is this, as a lower bound. */
  totalCountCap: number;
  bodyLimitBytes: number;
  /** Largest form body (urlencoded or multipart) an operation accepts; never more than bodyLimitBytes. */
  formBodyLimitBytes: number;
  /**
   * How long a request may take to arrive, headers and body (Node's requestTimeout; Fastify's
   * default is none): past it 408, and its connection and what it held are let go.
   */
  requestTimeoutMs: number;
  logLevel: LogLevel;
  /** Wall time one workflow run may take. */
  workflowTimeoutMs: number;
  /** Memory one workflow run may allocate inside its sandbox. */
  workflowMemoryMb: number;
  /** Processes `pal serve` runs, each a node on the same port (PostgreSQL only above 1). */
  serverProcesses: number;
  /** Worker threads that run workflows, in each server process. */
  workflowWorkers: number;
  /** The V8 heap of each worker thread, beside its sandbox's memory. */
  workflowWorkerHeapMb: number;
  /** What each worker keeps of pal versions' compiled modules, in MiB (0: none). */
  workflowCodeCacheMb: number;
  /** Runs of one enterprise on the workers of a node at once. */
  workflowRunsPerEnterprise: number;
  /** Runs of one enterprise that may wait for a worker on a node; past them 429. */
  workflowQueuePerEnterprise: number;
  /** Workflow mails (pal.mail.send) one enterprise may send per clock hour, on all nodes. */
  workflowMailsPerHour: number;
  /** Longest return value of a run, in characters of its JSON text. */
  workflowResultMaxChars: number;
  /** Days an audit record is kept; older ones are swept. */
  auditRetentionDays: number;
  /** The largest document file (PDF, PNG, JPEG) a pal may carry; larger ones are refused at deploy. */
  documentMaxBytes: number;
  /** The largest drawn signature (PNG) a session's form may post, in bytes (SIGNATURE_MAX_KB). */
  signatureMaxBytes: number;
  /** The largest file a session's form may upload, in bytes (UPLOAD_MAX_MB). */
  uploadMaxBytes: number;
  /** Requests per window: per API client, and per address for requests without valid credentials. */
  rateLimits: RateLimitConfig;
  /** Proxies whose X-Forwarded-For is believed (addresses, CIDR ranges); undefined: none. */
  trustProxy?: string[];
  /** Delivery of mails and webhooks (outbox/settings.ts). */
  outbox: OutboxConfig;
}

export interface RateLimitConfig {
  clientRequests: number;
  addressRequests: number;
  windowSeconds: number;
}

export const CONFIG_DEFAULTS = {
  HOST: '127.0.0.1',
  PORT: 8080,
  SERVICE_ROOT: defaultRoots.service,
  USER_ROOT: defaultRoots.user,
  DATA_DIR: './data',
  MAIL_FROM: 'Pal Workflow <no-reply@localhost>',
  TOKEN_TTL_SECONDS: 60,
  /** A day: time for every instance of a client application to take the new secret. */
  CLIENT_SECRET_GRACE_SECONDS: 24 * 60 * 60,
  PAGE_SIZE: 100,
  MAX_PAGE_SIZE: 1000,
  TOTAL_COUNT_CAP: 1000,
  BODY_LIMIT_BYTES: 25 * 1024 * 1024,
  FORM_BODY_LIMIT_BYTES: 64 * 1024,
  /** Two minutes: 10 MiB of uploads over a slow mobile link, 25 MiB to a client on a fair one. */
  REQUEST_TIMEOUT_MS: 120_000,
  LOG_LEVEL: 'info' as LogLevel,
  WORKFLOW_TIMEOUT_MS: 1000,
  WORKFLOW_MEMORY_MB: 64,
  SERVER_PROCESSES: 1,
  /** Unset: the cores shared out over the server processes, rounded up (one per core with one). */
  WORKFLOW_WORKERS: undefined,
  WORKFLOW_WORKER_HEAP_MB: 256,
  WORKFLOW_CODE_CACHE_MB: 32,
  /** Unset: half the workers (at least one). */
  WORKFLOW_RUNS_PER_ENTERPRISE: undefined,
  WORKFLOW_QUEUE_PER_ENTERPRISE: 100,
  WORKFLOW_MAILS_PER_HOUR: 1000,
  WORKFLOW_RESULT_MAX_CHARS: 4 * 1024 * 1024,
  DATABASE_POOL_SIZE: 10,
  DOCUMENT_MAX_MB: 25,
  SIGNATURE_MAX_KB: 100,
  UPLOAD_MAX_MB: 10,
  RATE_LIMIT_CLIENT_REQUESTS: 6000,
  RATE_LIMIT_ADDRESS_REQUESTS: 600,
  RATE_LIMIT_WINDOW_SECONDS: 60,
  AUDIT_RETENTION_DAYS: 365,
} as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

type Env = Record<string, string | undefined>;

/** The bounds of a run's limits, [least, most]: WORKFLOW_TIMEOUT_MS and WORKFLOW_MEMORY_MB, and `pal run`'s. */
export const WORKFLOW_LIMIT_RANGES = {
  timeoutMs: [10, 600_000],
  memoryMb: [8, 1024],
} as const;

/** Reads and validates every setting. Throws ConfigError on the first bad value. */
export function loadConfig(env: Env = process.env): Config {
  const get = (name: string): string | undefined => {
    // An empty variable counts as unset, as most shells and .env files leave them.
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  const host = hostSetting(get('HOST') ?? CONFIG_DEFAULTS.HOST);
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
  // Its path starts the pages' addresses and becomes the session cookie's Path: a ";" would end
  // the attribute, and a path beginning "//" (`https://x//evil.example`, or `/\evil.example` as
  // the URL parser reads it) would make every Location and link lead to another host.
  const publicPath = publicPathOf(publicUrl);
  if (publicPath.includes(';') || publicPath.startsWith('//'))
    throw new ConfigError(
      'PUBLIC_URL',
      `its path must not hold ";" nor begin with "//" (the pages' addresses and the session cookie's Path start with it), got "${publicUrl}"`,
    );
  const dataDir = dataDirSetting(get('DATA_DIR') ?? CONFIG_DEFAULTS.DATA_DIR);
  const database = databaseSetting(
    get('DATABASE_URL'),
    get('DATABASE_POOL_SIZE'),
    CONFIG_DEFAULTS.DATABASE_POOL_SIZE,
    dataDir,
    get('SQLITE_GROUP_COMMIT'),
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
  const clientSecretGraceSeconds = integerSetting(
    'CLIENT_SECRET_GRACE_SECONDS',
    get('CLIENT_SECRET_GRACE_SECONDS'),
    CONFIG_DEFAULTS.CLIENT_SECRET_GRACE_SECONDS,
    0,
    30 * 24 * 60 * 60,
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
  // Never more than BODY_LIMIT_BYTES (the router takes the smaller too): the value the settings
  // log shows is the one in force.
  const formBodyLimitBytes = Math.min(
    integerSetting(
      'FORM_BODY_LIMIT_BYTES',
      get('FORM_BODY_LIMIT_BYTES'),
      CONFIG_DEFAULTS.FORM_BODY_LIMIT_BYTES,
      1024,
      1024 * 1024 * 1024,
    ),
    bodyLimitBytes,
  );
  const requestTimeoutMs = integerSetting(
    'REQUEST_TIMEOUT_MS',
    get('REQUEST_TIMEOUT_MS'),
    CONFIG_DEFAULTS.REQUEST_TIMEOUT_MS,
    1000,
    3_600_000,
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
    ...WORKFLOW_LIMIT_RANGES.timeoutMs,
  );
  const workflowMemoryMb = integerSetting(
    'WORKFLOW_MEMORY_MB',
    get('WORKFLOW_MEMORY_MB'),
    CONFIG_DEFAULTS.WORKFLOW_MEMORY_MB,
    ...WORKFLOW_LIMIT_RANGES.memoryMb,
  );
  const serverProcesses = serverProcessesSetting(get('SERVER_PROCESSES'), database);
  const workflowWorkers = integerSetting(
    'WORKFLOW_WORKERS',
    get('WORKFLOW_WORKERS'),
    Math.ceil(availableParallelism() / serverProcesses),
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
  const documentMaxMb = integerSetting(
    'DOCUMENT_MAX_MB',
    get('DOCUMENT_MAX_MB'),
    CONFIG_DEFAULTS.DOCUMENT_MAX_MB,
    1,
    1024,
  );
  const signatureMaxKb = integerSetting(
    'SIGNATURE_MAX_KB',
    get('SIGNATURE_MAX_KB'),
    CONFIG_DEFAULTS.SIGNATURE_MAX_KB,
    1,
    512,
  );
  const uploadMaxMb = integerSetting(
    'UPLOAD_MAX_MB',
    get('UPLOAD_MAX_MB'),
    CONFIG_DEFAULTS.UPLOAD_MAX_MB,
    1,
    100,
  );
  const rateLimits: RateLimitConfig = {
    clientRequests: integerSetting(
      'RATE_LIMIT_CLIENT_REQUESTS',
      get('RATE_LIMIT_CLIENT_REQUESTS'),
      CONFIG_DEFAULTS.RATE_LIMIT_CLIENT_REQUESTS,
      1,
      1_000_000_000,
    ),
    addressRequests: integerSetting(
      'RATE_LIMIT_ADDRESS_REQUESTS',
      get('RATE_LIMIT_ADDRESS_REQUESTS'),
      CONFIG_DEFAULTS.RATE_LIMIT_ADDRESS_REQUESTS,
      1,
      1_000_000_000,
    ),
    windowSeconds: integerSetting(
      'RATE_LIMIT_WINDOW_SECONDS',
      get('RATE_LIMIT_WINDOW_SECONDS'),
      CONFIG_DEFAULTS.RATE_LIMIT_WINDOW_SECONDS,
      1,
      86_400,
    ),
  };
  const trustProxy = trustProxySetting(get('TRUST_PROXY'));
  const workflowWorkerHeapMb = integerSetting(
    'WORKFLOW_WORKER_HEAP_MB',
    get('WORKFLOW_WORKER_HEAP_MB'),
    CONFIG_DEFAULTS.WORKFLOW_WORKER_HEAP_MB,
    32,
    16_384,
  );
  const workflowCodeCacheMb = integerSetting(
    'WORKFLOW_CODE_CACHE_MB',
    get('WORKFLOW_CODE_CACHE_MB'),
    CONFIG_DEFAULTS.WORKFLOW_CODE_CACHE_MB,
    0,
    4096,
  );
  const workflowRunsPerEnterprise = integerSetting(
    'WORKFLOW_RUNS_PER_ENTERPRISE',
    get('WORKFLOW_RUNS_PER_ENTERPRISE'),
    Math.max(1, Math.floor(workflowWorkers / 2)),
    1,
    256,
  );
  const workflowQueuePerEnterprise = integerSetting(
    'WORKFLOW_QUEUE_PER_ENTERPRISE',
    get('WORKFLOW_QUEUE_PER_ENTERPRISE'),
    CONFIG_DEFAULTS.WORKFLOW_QUEUE_PER_ENTERPRISE,
    0,
    100_000,
  );
  const workflowMailsPerHour = integerSetting(
    'WORKFLOW_MAILS_PER_HOUR',
    get('WORKFLOW_MAILS_PER_HOUR'),
    CONFIG_DEFAULTS.WORKFLOW_MAILS_PER_HOUR,
    1,
    10_000_000,
  );
  const workflowResultMaxChars = integerSetting(
    'WORKFLOW_RESULT_MAX_CHARS',
    get('WORKFLOW_RESULT_MAX_CHARS'),
    CONFIG_DEFAULTS.WORKFLOW_RESULT_MAX_CHARS,
    1024,
    1024 * 1024 * 1024,
  );
  const outbox = outboxSettings(get);
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
    publicServicePath: publicServicePath(publicUrl, serviceRoot),
    userRoot,
    dataDir,
    database,
    mailUrl,
    mailFrom,
    secretKey,
    secretKeySource,
    tokenTtlSeconds,
    clientSecretGraceSeconds,
    pageSize,
    totalCountCap,
    bodyLimitBytes,
    formBodyLimitBytes,
    requestTimeoutMs,
    logLevel,
    workflowTimeoutMs,
    workflowMemoryMb,
    serverProcesses,
    workflowWorkers,
    documentMaxBytes: documentMaxMb * 1024 * 1024,
    signatureMaxBytes: signatureMaxKb * 1024,
    uploadMaxBytes: uploadMaxMb * 1024 * 1024,
    rateLimits,
    trustProxy,
    workflowWorkerHeapMb,
    workflowCodeCacheMb,
    workflowRunsPerEnterprise,
    workflowQueuePerEnterprise,
    workflowMailsPerHour,
    workflowResultMaxChars,
    auditRetentionDays,
    outbox,
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
    clientSecretGraceSeconds: config.clientSecretGraceSeconds,
    pageSize: config.pageSize,
    totalCountCap: config.totalCountCap,
    workflowTimeoutMs: config.workflowTimeoutMs,
    workflowMemoryMb: config.workflowMemoryMb,
    serverProcesses: config.serverProcesses,
    workflowWorkers: config.workflowWorkers,
    documentMaxBytes: config.documentMaxBytes,
    signatureMaxBytes: config.signatureMaxBytes,
    uploadMaxBytes: config.uploadMaxBytes,
    rateLimits: config.rateLimits,
    trustProxy: config.trustProxy ?? '(none)',
    workflowWorkerHeapMb: config.workflowWorkerHeapMb,
    workflowCodeCacheMb: config.workflowCodeCacheMb,
    workflowRunsPerEnterprise: config.workflowRunsPerEnterprise,
    workflowQueuePerEnterprise: config.workflowQueuePerEnterprise,
    workflowMailsPerHour: config.workflowMailsPerHour,
    workflowResultMaxChars: config.workflowResultMaxChars,
    auditRetentionDays: config.auditRetentionDays,
    bodyLimitBytes: config.bodyLimitBytes,
    formBodyLimitBytes: config.formBodyLimitBytes,
    requestTimeoutMs: config.requestTimeoutMs,
    logLevel: config.logLevel,
    outbox: config.outbox,
  };
}

/**
 * SERVER_PROCESSES: a count, or `auto`: one per core on PostgreSQL, one on SQLite. Above 1 only on
 * PostgreSQL: on SQLite a second process on the file only waits for its write lock, with its event
 * loop stopped meanwhile, and counts rate limits of its own (docs/decisions.md).
 */
function serverProcessesSetting(raw: string | undefined, database: DatabaseConfig): number {
  if (raw?.toLowerCase() === 'auto')
    return database.kind === 'postgres' ? Math.min(256, availableParallelism()) : 1;
  let processes: number;
  try {
    processes = integerSetting('SERVER_PROCESSES', raw, CONFIG_DEFAULTS.SERVER_PROCESSES, 1, 256);
  } catch {
    throw new ConfigError(
      'SERVER_PROCESSES',
      `expected an integer from 1 to 256 or auto, got "${raw}"`,
    );
  }
  if (processes > 1 && database.kind !== 'postgres')
    throw new ConfigError(
      'SERVER_PROCESSES',
      `${processes} processes need a PostgreSQL DATABASE_URL: on SQLite one process serves the database file`,
    );
  return processes;
}

/** PUBLIC_URL's path without its trailing `/`: `` when it has none, else e.g. `/pal`. */
export function publicPathOf(publicUrl: string): string {
  return new URL(publicUrl).pathname.replace(/\/+$/, '');
}

/** PUBLIC_URL's path and `/{service_root}`: see Config.publicServicePath. */
function publicServicePath(publicUrl: string, serviceRoot: string): string {
  return `${publicPathOf(publicUrl)}/${serviceRoot}`;
}

function defaultPublicUrl(host: string, port: number): string {
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${shownHost}:${port}`;
}
