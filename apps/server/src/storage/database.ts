// Opening the database named by the settings, and bringing its schema up to date.
import { Migrator, sql, type Kysely, type MigrationResult } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { migrations } from './migrations/index.js';
import type { DatabaseSchema } from './schema.js';
import { openSqlite } from './sqlite.js';

export type Db = Kysely<DatabaseSchema>;

/** Opens the database (SQLite: the file, WAL, synchronous=FULL, foreign keys on). Close with db.destroy(). */
export function openDatabase(config: { database: DatabaseConfig }): Db {
  switch (config.database.kind) {
    case 'sqlite':
      return openSqlite(config.database.path);
  }
}

function migrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

/** Applies every pending migration; returns the names applied now (empty when up to date). */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error')?.migrationName;
    throw new Error(
      `migration ${failed ?? '(unknown)'} failed: ${(error as Error).message ?? String(error)}`,
      {
        cause: error,
      },
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of all migrations, each with whether it has been applied. */
export async function migrationStatus(
  db: Kysely<any>,
): Promise<{ name: string; applied: boolean }[]> {
  const all = await migrator(db).getMigrations();
  return all.map((m) => ({ name: m.name, applied: m.executedAt !== undefined }));
}

/** Resolves when the database answers a trivial query (the health check). */
export async function pingDatabase(db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db);
}
