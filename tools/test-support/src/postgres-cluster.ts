// A throw-away PostgreSQL server for tests and benchmarks: a fresh cluster (initdb) in a temporary
// folder, listening on a free loopback port, removed on stop. It uses the machine's PostgreSQL
// binaries (Debian's `postgresql` package; .ci/run installs it). PostgreSQL refuses to run as
// root, so as root every server command runs as the `postgres` user, which that package creates.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

export interface PostgresCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres: the superuser on the maintenance database. */
  adminUrl: string;
  /** The URL of a database of this cluster. */
  urlOf(database: string): string;
  /** Creates an empty database with a fresh name and returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /**
   * Extra server settings (`name=value`). Tests run with fsync off: the cluster is thrown away,
   * and a process killed mid-test still loses nothing PostgreSQL acknowledged (the OS keeps it).
   */
  settings?: Record<string, string>;
}

/** The folder of initdb and pg_ctl: PAL_POSTGRES_BINDIR, or the newest Debian installation. */
export function postgresBinDir(): string {
  const fromEnv = process.env.PAL_POSTGRES_BINDIR;
  if (fromEnv) return fromEnv;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(
      'no PostgreSQL server binaries found: install Debian\'s "postgresql" package (.ci/run does), or set PAL_POSTGRES_BINDIR to the folder of initdb and pg_ctl',
    );
  }
  return join(root, versions[0], 'bin');
}

export async function startPostgresCluster(options: ClusterOptions = {}): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'pal-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]]
      : [join(bin, command), args];
    const result = spawnSync(file, argv, { encoding: 'utf8' });
    if (result.status !== 0) {
      throw new Error(
        `${command} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`,
      );
    }
  };
  const data = join(dir, 'data');
  // C collation: text sorts by bytes, as it does on SQLite, so both engines order alike.
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--locale=C', '--encoding=UTF8']);
  const port = await freePort();
  const settings = {
    listen_addresses: '127.0.0.1',
    port: String(port),
    unix_socket_directories: dir,
    max_connections: '400',
    fsync: 'off',
    full_page_writes: 'off',
    ...options.settings,
  };
  const serverOptions = Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', serverOptions, '-w', 'start']);

  const urlOf = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let stopped = false;
  return {
    adminUrl: urlOf('postgres'),
    urlOf,
    createDatabase: (prefix) => createDatabaseAt(urlOf('postgres'), prefix),
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Creates an empty database on a running server (given its superuser URL); returns its URL. */
export async function createDatabaseAt(adminUrl: string, prefix = 'pal_test'): Promise<string> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
