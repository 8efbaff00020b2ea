// Opening the database named by the settings, and bringing its schema up to date.
import { Migrator, sql, type Kysely, type MigrationResult } from 'kysely';
import { describeDatabase, type DatabaseConfig } from '../config.js';
import { dialectOf } from './adapter-dialect.js';
import { migrations } from './migrations/index.js';
import { DatabaseUnavailableError, openPostgres } from './postgres.js';
import type { DatabaseSchema } from './schema.js';
import { openSqlite } from './sqlite.js';

export type Db = Kysely<DatabaseSchema>;

/**
 * The database cannot be used: unreachable, refusing us, or of a newer schema than this program
 * knows. Its message is one line for an operator, without credentials.
 */
export class DatabaseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseError';
  }
}

/**
 * Opens the database (SQLite: the file, WAL, synchronous=FULL, foreign keys on; PostgreSQL: a
 * pool that connects on first use). Close with db.destroy().
 */
export function openDatabase(config: { database: DatabaseConfig }): Db {
  switch (config.database.kind) {
    case 'sqlite':
      return openSqlite(config.database.path, config.database.groupCommit);
    case 'postgres':
      return openPostgres(config.database.url, config.database.poolSize);
  }
}

/**
 * Opens the database, checks that it answers and brings its schema up to date: what the server
 * and every CLI command do first. Returns the migrations applied now. Throws DatabaseError.
 */
export async function connectDatabase(config: {
  database: DatabaseConfig;
}): Promise<{ db: Db; applied: string[] }> {
  let db: Db;
  try {
    db = openDatabase(config);
  } catch (error) {
    // SQLite opens its file at once: a folder, or a path it may not write, fails here.
    throw new DatabaseError(
      `cannot use the database ${describeDatabase(config.database)}: ${oneLine(error)}`,
      { cause: error },
    );
  }
  try {
    await checkReachable(db, config.database);
    if (config.database.kind === 'postgres') await checkPostgresText(db, config.database);
    const applied = await migrateToLatest(db);
    await dialectOf(db).refreshChangeStamp(db);
    return { db, applied };
  } catch (error) {
    await db.destroy();
    throw error;
  }
}

/** One query, so an unreachable database stops start-up with a clear message. */
export async function checkReachable(db: Kysely<any>, database: DatabaseConfig): Promise<void> {
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    const reason = oneLine(error instanceof DatabaseUnavailableError ? error.cause : error);
    throw new DatabaseError(`cannot use the database ${describeDatabase(database)}: ${reason}`, {
      cause: error,
    });
  }
}

/**
 * A PostgreSQL database keeps text as the service does only in UTF-8 (another encoding refuses or
 * mangles what a person types), and lists come out in the order they have on SQLite only when
 * text sorts by its bytes (the C collation). Either is fixed once, when the database is made, so
 * a database without them is refused before anything is written to it. The order is tested by
 * comparing, not by the collation's name: an ICU default collation sorts as its locale whatever
 * `datcollate` says.
 */
export async function checkPostgresText(db: Kysely<any>, database: DatabaseConfig): Promise<void> {
  const { rows } = await sql<{ encoding: string; bytewise: boolean }>`
    select current_setting('server_encoding') as encoding,
           ('B' < 'a' and 'Z' < 'a' and 'a' < 'b' and 'a' < 'é') as bytewise`.execute(db);
  const { encoding, bytewise } = rows[0]!;
  const fix =
    "make it with ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0 (docs/deployment.md, \"PostgreSQL\")";
  if (encoding !== 'UTF8')
    throw new DatabaseError(
      `cannot use the database ${describeDatabase(database)}: its encoding is ${encoding}, not UTF8: ${fix}`,
    );
  if (!bytewise)
    throw new DatabaseError(
      `cannot use the database ${describeDatabase(database)}: its text does not sort by bytes (its collation is not C), so lists would come out in another order than on SQLite: ${fix}`,
    );
}

/** An error's message on one line; a connection error's code when it has no message (pg does that). */
function oneLine(error: unknown): string {
  const e = error as { message?: string; code?: string; errors?: { message?: string }[] };
  // A host with several addresses fails with an AggregateError of one error per address.
  const message = e?.message || e?.errors?.[0]?.message || e?.code || String(error);
  return message.replace(/\s+/g, ' ').trim();
}

function migrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

/**
 * Applies every pending migration; returns the names applied now (empty when up to date).
 * A database that has migrations this program does not know was made by a newer version: it is
 * left untouched and DatabaseError says so.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const unknown = (await appliedMigrations(db)).filter((name) => !Object.hasOwn(migrations, name));
  if (unknown.length > 0) {
    throw new DatabaseError(
      `the database schema is newer than this program (it has migration ${unknown.join(', ')}, which this version does not know): run the newer version, or restore a backup`,
    );
  }
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

/** Names of the migrations recorded in the database (none before the first migration). */
async function appliedMigrations(db: Kysely<any>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === 'kysely_migration')) return [];
  const rows = await db.selectFrom('kysely_migration').select('name').execute();
  return rows.map((row: { name: string }) => row.name);
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
