// Which database engine the tests of this vitest project run on (vitest.config.ts), and a fresh
// database of it: SQLite, a file in the test's DATA_DIR; PostgreSQL, a new database in the
// cluster that test/postgres-setup.ts started.
import { createDatabaseAt } from '@pal-workflow/test-support';
import { inject } from 'vitest';

export type Engine = 'sqlite' | 'postgres';

export const engine: Engine = process.env.PAL_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/**
 * Settings for a fresh, empty database of the engine: `{}` on SQLite (DATA_DIR/pal.sqlite),
 * `{DATABASE_URL}` of a new database on PostgreSQL.
 */
export async function freshDatabaseEnv(): Promise<Record<string, string>> {
  if (engine === 'sqlite') return {};
  return { DATABASE_URL: await createDatabaseAt(inject('postgresAdminUrl')) };
}
