import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from './config.js';

const HEX_KEY = 'ab'.repeat(32);

describe('loadConfig', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'pal-config-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const env = (extra: Record<string, string> = {}) => ({
    DATA_DIR: dataDir,
    PAL_SECRET_KEY: HEX_KEY,
    ...extra,
  });

  it('fills every default', () => {
    const config = loadConfig(env());
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      publicUrl: 'http://127.0.0.1:8080',
      serviceRoot: 'services',
      userRoot: 'user',
      dataDir,
      database: { kind: 'sqlite', path: join(dataDir, 'pal.sqlite'), groupCommit: true },
      mailFrom: 'Pal Workflow <no-reply@localhost>',
      secretKeySource: 'env',
      tokenTtlSeconds: 60,
      clientSecretGraceSeconds: 86_400,
      pageSize: 100,
      bodyLimitBytes: 25 * 1024 * 1024,
      formBodyLimitBytes: 64 * 1024,
      requestTimeoutMs: 120_000,
      logLevel: 'info',
      workflowTimeoutMs: 1000,
      workflowMemoryMb: 64,
      serverProcesses: 1,
      workflowWorkers: availableParallelism(),
      documentMaxBytes: 25 * 1024 * 1024,
      signatureMaxBytes: 100 * 1024,
      uploadMaxBytes: 10 * 1024 * 1024,
      rateLimits: { clientRequests: 6000, addressRequests: 600, windowSeconds: 60 },
      workflowWorkerHeapMb: 256,
      workflowCodeCacheMb: 32,
      workflowRunsPerEnterprise: Math.max(1, Math.floor(availableParallelism() / 2)),
      workflowQueuePerEnterprise: 100,
      workflowMailsPerHour: 1000,
      workflowResultMaxChars: 4 * 1024 * 1024,
    });
    expect(config.mailUrl).toBeUndefined();
    expect(config.trustProxy).toBeUndefined();
    expect(config.secretKey.toString('hex')).toBe(HEX_KEY);
  });

  it('derives PUBLIC_URL from HOST and PORT, and trims a trailing slash from an explicit one', () => {
    expect(loadConfig(env({ HOST: '0.0.0.0', PORT: '9000' })).publicUrl).toBe(
      'http://0.0.0.0:9000',
    );
    expect(loadConfig(env({ HOST: '::1', PORT: '9000' })).publicUrl).toBe('http://[::1]:9000');
    expect(loadConfig(env({ PUBLIC_URL: 'https://pal.example.com/base/' })).publicUrl).toBe(
      'https://pal.example.com/base',
    );
  });

  it('names the path people reach the service root at: PUBLIC_URL’s path, then the root', () => {
    expect(loadConfig(env()).publicServicePath).toBe('/services');
    expect(loadConfig(env({ PUBLIC_URL: 'https://pal.example.com/' })).publicServicePath).toBe(
      '/services',
    );
    expect(
      loadConfig(env({ PUBLIC_URL: 'https://pal.example.com/base/', SERVICE_ROOT: 'svc' }))
        .publicServicePath,
    ).toBe('/base/svc');
    expect(loadConfig(env({ PUBLIC_URL: 'https://pal.example.com/a/b//' })).publicServicePath).toBe(
      '/a/b/services',
    );
    for (const bad of [
      'https://pal.example.com/a;b',
      'https://pal.example.com//evil.example',
      'https://pal.example.com/\\evil.example',
      'https://pal.example.com/pal/..//evil.example',
    ])
      expect(() => loadConfig(env({ PUBLIC_URL: bad })), bad).toThrow(
        'PUBLIC_URL: its path must not hold ";" nor begin with "//"',
      );
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig(env({ PORT: '', LOG_LEVEL: ' ' })).port).toBe(8080);
  });

  it('resolves DATA_DIR and sqlite: paths to absolute paths', () => {
    const config = loadConfig(env({ DATABASE_URL: 'sqlite:some/where.db' }));
    expect(config.database).toEqual({
      kind: 'sqlite',
      path: resolve('some/where.db'),
      groupCommit: true,
    });
    expect(loadConfig(env({ DATABASE_URL: 'sqlite::memory:' })).database).toEqual({
      kind: 'sqlite',
      path: ':memory:',
      groupCommit: true,
    });
  });

  it('SQLITE_GROUP_COMMIT turns group commit off, and takes only true or false', () => {
    expect(loadConfig(env({ SQLITE_GROUP_COMMIT: 'false' })).database).toMatchObject({
      kind: 'sqlite',
      groupCommit: false,
    });
    expect(() => loadConfig(env({ SQLITE_GROUP_COMMIT: 'sometimes' }))).toThrow(
      /SQLITE_GROUP_COMMIT/,
    );
    expect(() =>
      loadConfig(env({ DATABASE_URL: 'postgres://db.example/pal', SQLITE_GROUP_COMMIT: 'true' })),
    ).toThrow(/SQLITE_GROUP_COMMIT: applies to a SQLite database only/);
  });

  it('takes a PostgreSQL URL with a pool size, and never shows its password', () => {
    const url = 'postgres://pal:pa55word@db.example.com:5433/pal?sslmode=require';
    expect(loadConfig(env({ DATABASE_URL: url })).database).toEqual({
      kind: 'postgres',
      url,
      poolSize: 10,
    });
    const config = loadConfig(env({ DATABASE_URL: url, DATABASE_POOL_SIZE: '25' }));
    expect(config.database).toMatchObject({ poolSize: 25 });
    expect(describeConfig(config).database).toBe(
      'postgres://pal:***@db.example.com:5433/pal?sslmode=require',
    );
    expect(() => loadConfig(env({ DATABASE_URL: url, DATABASE_POOL_SIZE: '0' }))).toThrow(
      /DATABASE_POOL_SIZE: expected an integer from 2 to 1000/,
    );
  });

  it('requires PAL_SECRET_KEY with PostgreSQL: every node must share it', () => {
    expect(() =>
      loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://db.example.com/pal' }),
    ).toThrow(/PAL_SECRET_KEY: required with a PostgreSQL DATABASE_URL/);
  });

  it('accepts the other settings', () => {
    const config = loadConfig(
      env({
        SERVICE_ROOT: '/svc/',
        USER_ROOT: 'people',
        MAIL_URL: 'smtp://user:secret@mail.example.com:2525',
        MAIL_FROM: 'robot@example.com',
        TOKEN_TTL_SECONDS: '120',
        CLIENT_SECRET_GRACE_SECONDS: '0',
        PAGE_SIZE: '1000',
        BODY_LIMIT_BYTES: '2048',
        FORM_BODY_LIMIT_BYTES: '4096',
        RATE_LIMIT_CLIENT_REQUESTS: '100',
        RATE_LIMIT_ADDRESS_REQUESTS: '10',
        RATE_LIMIT_WINDOW_SECONDS: '1',
        TRUST_PROXY: ' 10.0.0.1, 192.168.0.0/16,loopback, fd00::/8 ',
        LOG_LEVEL: 'DEBUG',
        DOCUMENT_MAX_MB: '5',
        SIGNATURE_MAX_KB: '20',
        UPLOAD_MAX_MB: '2',
      }),
    );
    expect(config).toMatchObject({
      serviceRoot: 'svc',
      userRoot: 'people',
      mailUrl: 'smtp://user:secret@mail.example.com:2525',
      mailFrom: 'robot@example.com',
      tokenTtlSeconds: 120,
      clientSecretGraceSeconds: 0,
      pageSize: 1000,
      bodyLimitBytes: 2048,
      // Asked for 4096: never more than BODY_LIMIT_BYTES, and said as the value in force.
      formBodyLimitBytes: 2048,
      rateLimits: { clientRequests: 100, addressRequests: 10, windowSeconds: 1 },
      trustProxy: ['10.0.0.1', '192.168.0.0/16', 'loopback', 'fd00::/8'],
      logLevel: 'debug',
      documentMaxBytes: 5 * 1024 * 1024,
      signatureMaxBytes: 20 * 1024,
      uploadMaxBytes: 2 * 1024 * 1024,
    });
    expect(JSON.stringify(describeConfig(config))).not.toContain('secret@');
    expect(JSON.stringify(describeConfig(config))).not.toContain(HEX_KEY);
  });

  it.each([
    ['PORT', 'abc', /PORT: expected an integer from 0 to 65535, got "abc"/],
    ['PORT', '70000', /PORT: expected an integer/],
    ['PORT', '80.5', /PORT: expected an integer/],
    ['PAGE_SIZE', '1001', /PAGE_SIZE: expected an integer from 1 to 1000/],
    ['PAGE_SIZE', '0', /PAGE_SIZE: expected an integer from 1 to 1000/],
    ['TOTAL_COUNT_CAP', '0', /TOTAL_COUNT_CAP: expected an integer from 1 to 100000000/],
    ['WORKFLOW_TIMEOUT_MS', '5', /WORKFLOW_TIMEOUT_MS: expected an integer from 10 to 600000/],
    ['WORKFLOW_MEMORY_MB', 'lots', /WORKFLOW_MEMORY_MB: expected an integer from 8 to 1024/],
    ['WORKFLOW_WORKERS', '0', /WORKFLOW_WORKERS: expected an integer from 1 to 256/],
    ['DOCUMENT_MAX_MB', '0', /DOCUMENT_MAX_MB: expected an integer from 1 to 1024/],
    ['WORKFLOW_WORKER_HEAP_MB', '8', /WORKFLOW_WORKER_HEAP_MB: expected an integer from 32/],
    ['WORKFLOW_CODE_CACHE_MB', '-1', /WORKFLOW_CODE_CACHE_MB: expected an integer from 0 to 4096/],
    ['WORKFLOW_RUNS_PER_ENTERPRISE', '0', /WORKFLOW_RUNS_PER_ENTERPRISE: expected an integer/],
    ['WORKFLOW_QUEUE_PER_ENTERPRISE', '-1', /WORKFLOW_QUEUE_PER_ENTERPRISE: expected an integer/],
    ['WORKFLOW_MAILS_PER_HOUR', '0', /WORKFLOW_MAILS_PER_HOUR: expected an integer from 1/],
    ['WORKFLOW_RESULT_MAX_CHARS', '10', /WORKFLOW_RESULT_MAX_CHARS: expected an integer/],
    ['TOKEN_TTL_SECONDS', '-5', /TOKEN_TTL_SECONDS: expected an integer/],
    [
      'CLIENT_SECRET_GRACE_SECONDS',
      '2592001',
      /CLIENT_SECRET_GRACE_SECONDS: expected an integer from 0 to 2592000/,
    ],
    ['BODY_LIMIT_BYTES', '1e9', /BODY_LIMIT_BYTES: expected an integer/],
    ['FORM_BODY_LIMIT_BYTES', '100', /FORM_BODY_LIMIT_BYTES: expected an integer from 1024/],
    ['RATE_LIMIT_CLIENT_REQUESTS', '0', /RATE_LIMIT_CLIENT_REQUESTS: expected an integer from 1/],
    ['RATE_LIMIT_ADDRESS_REQUESTS', 'many', /RATE_LIMIT_ADDRESS_REQUESTS: expected an integer/],
    ['RATE_LIMIT_WINDOW_SECONDS', '86401', /RATE_LIMIT_WINDOW_SECONDS: expected an integer/],
    ['TRUST_PROXY', 'proxy.example.com', /TRUST_PROXY: expected addresses, CIDR ranges/],
    ['TRUST_PROXY', '10.0.0.0/33', /TRUST_PROXY: .* got "10.0.0.0\/33"/],
    ['TRUST_PROXY', 'true', /TRUST_PROXY: expected addresses/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL: expected one of fatal, error/],
    ['PUBLIC_URL', 'pal.example.com', /PUBLIC_URL: expected an absolute http/],
    ['PUBLIC_URL', 'ftp://pal.example.com', /PUBLIC_URL: expected an http/],
    [
      'PUBLIC_URL',
      'https://admin:s3cret@pal.example.com/?x=1',
      /^PUBLIC_URL: must not carry a user name or password .*got "https:\/\/pal.example.com\/\?x=1" with them$/,
    ],
    [
      'PUBLIC_URL',
      'https://admin:s3cret@pal.example.com',
      /^PUBLIC_URL: must not carry a user name or password .*got "https:\/\/pal.example.com\/" with them$/,
    ],
    ['SERVICE_ROOT', 'a/b', /SERVICE_ROOT: expected one URL path segment/],
    ['USER_ROOT', 'services', /USER_ROOT: must differ from SERVICE_ROOT/],
    ['DATABASE_URL', 'postgres://db', /DATABASE_URL: the PostgreSQL URL names no database/],
    ['DATABASE_URL', 'postgres://', /DATABASE_URL: the PostgreSQL URL names no host/],
    ['DATABASE_URL', 'mysql://db/pal', /DATABASE_URL: expected sqlite:PATH, postgres:\/\/…/],
    ['DATABASE_POOL_SIZE', '5', /DATABASE_POOL_SIZE: applies to a PostgreSQL DATABASE_URL only/],
    ['MAIL_URL', 'http://mail', /MAIL_URL: expected an smtp:\/\/ or smtps:\/\/ URL/],
    ['MAIL_FROM', 'nobody', /MAIL_FROM: expected an address/],
    ['MAIL_FROM', 'x\r\nBcc: a@b.example <pal@b.example>', /MAIL_FROM: expected an address/],
    ['MAIL_FROM', 'Pal\t<pal@b.example>', /MAIL_FROM: expected an address/],
    ['PAL_SECRET_KEY', 'short', /PAL_SECRET_KEY: expected 32 bytes/],
    ['PAL_SECRET_KEY', 'ab'.repeat(31), /PAL_SECRET_KEY: expected 32 bytes/],
    ['SERVER_PROCESSES', '0', /SERVER_PROCESSES: expected an integer from 1 to 256 or auto/],
    ['SERVER_PROCESSES', 'many', /SERVER_PROCESSES: expected an integer from 1 to 256 or auto/],
    ['SERVER_PROCESSES', '2', /SERVER_PROCESSES: 2 processes need a PostgreSQL DATABASE_URL/],
    // Before, the first as PUBLIC_URL (which was not set), the others not at all (listen failed).
    [
      'HOST',
      '999.1.1.1',
      /^HOST: expected an IP address \(127\.0\.0\.1, ::\) or a host name, got "999/,
    ],
    ['HOST', 'bad_host', /^HOST: expected an IP address/],
    ['HOST', 'http://x', /^HOST: expected an IP address/],
  ])('rejects %s=%s with a message naming it', (name, value, message) => {
    let thrown: unknown;
    try {
      loadConfig(env({ [name]: value }));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).variable).toBe(name);
    expect((thrown as ConfigError).message).toMatch(message);
  });

  it('runs several server processes on PostgreSQL only, and shares the cores out among them', () => {
    const postgres = { DATABASE_URL: 'postgres://db.example/pal' };
    expect(loadConfig(env()).serverProcesses).toBe(1);
    const three = loadConfig(env({ ...postgres, SERVER_PROCESSES: '3' }));
    expect(three.serverProcesses).toBe(3);
    expect(three.workflowWorkers).toBe(Math.ceil(availableParallelism() / 3));
    expect(loadConfig(env({ ...postgres, SERVER_PROCESSES: 'AUTO' })).serverProcesses).toBe(
      availableParallelism(),
    );
    // On SQLite, `auto` is the one process SQLite takes, on any machine.
    expect(loadConfig(env({ SERVER_PROCESSES: 'auto' })).serverProcesses).toBe(1);
    // Set explicitly, the sandbox workers are each process's own.
    expect(
      loadConfig(env({ ...postgres, SERVER_PROCESSES: '3', WORKFLOW_WORKERS: '4' }))
        .workflowWorkers,
    ).toBe(4);
  });

  it('accepts a base64 or base64url key', () => {
    const key = Buffer.alloc(32, 0xfb);
    expect(loadConfig(env({ PAL_SECRET_KEY: key.toString('base64') })).secretKey.equals(key)).toBe(
      true,
    );
    expect(
      loadConfig(env({ PAL_SECRET_KEY: key.toString('base64url') })).secretKey.equals(key),
    ).toBe(true);
  });

  it('generates a key in embedded mode, keeps it in DATA_DIR/secret.key (0600) and reuses it', () => {
    const first = loadConfig({ DATA_DIR: dataDir });
    expect(first.secretKeySource).toBe('generated');
    expect(first.secretKey).toHaveLength(32);
    const file = join(dataDir, 'secret.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.secretKey.toString('hex'));

    const second = loadConfig({ DATA_DIR: dataDir });
    expect(second.secretKeySource).toBe('file');
    expect(second.secretKey.equals(first.secretKey)).toBe(true);
  });

  it.each(['0.0.0.0', '::', '::1', 'localhost', 'pal-1.internal.example'])(
    'takes HOST=%s',
    (host) => {
      expect(loadConfig({ DATA_DIR: dataDir, HOST: host }).host).toBe(host);
    },
  );

  it('names DATA_DIR when it is a file, or cannot hold the generated key', () => {
    const file = join(dataDir, 'a-file');
    writeFileSync(file, '');
    const thrown = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return error as ConfigError;
      }
      throw new Error('loaded');
    };
    // Before: "bad setting PAL_SECRET_KEY: unset, and …/secret.key cannot be read: ENOTDIR".
    expect(thrown({ DATA_DIR: file })).toMatchObject({
      variable: 'DATA_DIR',
      message: `DATA_DIR: ${file} is a file, not a folder`,
    });
    // A folder that cannot be made (its parent is a file).
    const inside = join(file, 'data');
    expect(thrown({ DATA_DIR: inside })).toMatchObject({ variable: 'DATA_DIR' });
    expect(thrown({ DATA_DIR: inside }).message).toMatch(
      /^DATA_DIR: PAL_SECRET_KEY is unset, and the key .*secret\.key.*: ENOTDIR/,
    );
    // A file system that refuses new folders with ENOENT: Node's recursive mkdir never returned.
    expect(thrown({ DATA_DIR: '/proc/pal-data' }).message).toMatch(
      /^DATA_DIR: PAL_SECRET_KEY is unset, and the key .*: ENOENT.*mkdir '\/proc\/pal-data'/,
    );
  });

  it('refuses a damaged key file instead of replacing it', () => {
    writeFileSync(join(dataDir, 'secret.key'), 'not a key\n');
    expect(() => loadConfig({ DATA_DIR: dataDir })).toThrow(
      /PAL_SECRET_KEY: unset, and .*secret.key does not hold/,
    );
  });
});
