// The `pal` CLI on PostgreSQL (DATABASE_URL=postgres://…), each command in its own process as an
// operator runs it: migrate, the tenant and pal commands, and the one-line start-up errors.
// (The SQLite side of every command is src/cli.int.test.ts.)
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, freshDatabaseEnv } from './engine.js';
import { ROTATION_TIMEOUT_MS, rotateAndDeleteAgainstAServer } from './client-rotation.js';
import { runPal as pal } from './pal-process.js';
import { tempDir } from './helpers.js';
import { MIGRATION_NAMES } from './migration-names.js';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const examples = resolve(serverDir, '../../examples/pals');

describe.runIf(engine === 'postgres')('pal CLI on PostgreSQL', () => {
  const dir = tempDir('pal-cli-pg-');
  let env: Record<string, string>;
  beforeAll(async () => {
    env = {
      DATA_DIR: join(dir.path, 'data'),
      PAL_SECRET_KEY: 'cd'.repeat(32),
      ...(await freshDatabaseEnv()),
    };
  });
  afterAll(() => dir.remove());

  it('migrate migrates the database once, naming it without its password', async () => {
    const first = await pal(env, 'migrate', '--json');
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toEqual({
      applied: MIGRATION_NAMES,
      database: env.DATABASE_URL,
    });
    expect(JSON.parse((await pal(env, 'migrate', '--json')).stdout)).toMatchObject({
      applied: [],
    });
  });

  it('creates an enterprise and a client, deploys and lists a pal', async () => {
    const enterprise = await pal(env, 'enterprise', 'create', 'Acme', '--json');
    expect(JSON.parse(enterprise.stdout)).toMatchObject({ name: 'Acme' });
    const client = await pal(env, 'client', 'create', '--enterprise', 'acme', '--json');
    expect(JSON.parse(client.stdout)).toMatchObject({ enterprise: 'Acme' });
    const folder = join(examples, 'expense-approval');
    const deployed = await pal(env, 'pal', 'deploy', folder, '--enterprise', 'Acme', '--json');
    expect(JSON.parse(deployed.stdout)).toEqual({
      id: 'expense-approval',
      name: 'Expense approval',
    });
    const listed = await pal(env, 'pal', 'list', '--enterprise', 'Acme', '--json');
    expect((JSON.parse(listed.stdout) as { pals: { id: string }[] }).pals.map((p) => p.id)).toEqual(
      ['expense-approval'],
    );
  });

  it(
    'client rotate and delete, with a server on the same database',
    async () => {
      await rotateAndDeleteAgainstAServer(pal, env);
    },
    ROTATION_TIMEOUT_MS,
  );

  it('stops with one line when the database is unreachable, or PAL_SECRET_KEY is unset', async () => {
    const unreachable = await pal(
      { ...env, DATABASE_URL: 'postgres://pal:s3cret@127.0.0.1:1/pal' },
      'migrate',
    );
    expect(unreachable).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: cannot use the database postgres://pal:***@127.0.0.1:1/pal: connect ECONNREFUSED 127.0.0.1:1\n',
    });
    const { PAL_SECRET_KEY: _key, ...withoutKey } = env;
    const keyless = await pal(withoutKey, 'serve');
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toBe(
      'error: bad setting PAL_SECRET_KEY: required with a PostgreSQL DATABASE_URL: every node must use the same key (e.g. `openssl rand -hex 32`)\n',
    );
  });

  it('serve stops with one line when the schema is newer than the program', async () => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    await client.query(
      `insert into kysely_migration (name, timestamp) values ('9999_future', now()::text)`,
    );
    await client.end();
    const served = await pal({ ...env, PORT: '0' }, 'serve');
    expect(served.code).toBe(1);
    expect(served.stderr).toBe(
      'error: the database schema is newer than this program (it has migration 9999_future, which this version does not know): run the newer version, or restore a backup\n',
    );
  });
});
