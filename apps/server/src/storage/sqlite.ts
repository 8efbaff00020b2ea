// Everything that only SQLite accepts lives here: opening the file with its pragmas, and the FTS5
// trigram index that makes "transaction name contains" fast over millions of rows.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type SqlBool } from 'kysely';
import { likeContains } from './conditions.js';
import type { StorageDialect, TransactionsQuery } from './dialect.js';
import type { DatabaseSchema } from './schema.js';

/** Milliseconds a writer waits for another process's write lock (e.g. the CLI beside the server). */
const BUSY_TIMEOUT_MS = 5000;
const TEXT_INDEX = 'transactions_text_fts';
const TEXT_COLUMNS = ['name_key', 'description_key', 'category_key'] as const;

/**
 * Opens (creating if need be) a SQLite database file.
 * - WAL: readers never block the writer;
 * - synchronous=FULL: with WAL, a commit returns only after the log is synced to disk, so an
 *   acknowledged write survives a power cut (NORMAL may lose the last commits);
 * - foreign_keys=ON: SQLite leaves them off by default.
 */
export function openSqlite(path: string): Kysely<DatabaseSchema> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new Database(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const changes: ChangeTracking = {
    dataVersionStatement: database.prepare('pragma data_version').pluck(),
    dataVersion: 0,
    checkedAt: -Infinity,
    ownWrites: 0,
  };
  const db = new Kysely<DatabaseSchema>({
    dialect: new SqliteDialect({ database: withStatementCache(database, changes) }),
  });
  changeTracking.set(db, changes);
  return db;
}

/**
 * What tells whether the data may have changed: `pragma data_version` moves when another
 * connection (the CLI, another process) commits; our own writes are counted as they run.
 */
interface ChangeTracking {
  readonly dataVersionStatement: Database.Statement;
  dataVersion: number;
  /** performance.now() of the last data_version read. */
  checkedAt: number;
  ownWrites: number;
}

/** How stale another process's commits may be seen (own writes are seen at once). */
const DATA_VERSION_INTERVAL_MS = 1;

const changeTracking = new WeakMap<object, ChangeTracking>();

/** How many distinct SQL texts keep a prepared statement; the queries are built from a few shapes. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every statement anew, which costs more than running it (about
 * 35 µs per query, measured under load). The query builder produces few distinct SQL texts, so
 * prepared statements are kept per text, least recently used first out.
 */
function withStatementCache(
  database: Database.Database,
  changes: ChangeTracking,
): Database.Database {
  const cache = new Map<string, Database.Statement>();
  const prepare = (source: string): Database.Statement => {
    let statement = cache.get(source);
    if (statement) {
      cache.delete(source);
    } else {
      statement = database.prepare(source);
      if (!statement.reader) statement = countingWrites(statement, changes);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, statement);
    return statement;
  };
  return new Proxy(database, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A writing statement that counts its runs (see ChangeTracking). */
function countingWrites(
  statement: Database.Statement,
  changes: ChangeTracking,
): Database.Statement {
  return new Proxy(statement, {
    get(target, prop, receiver) {
      if (prop === 'run')
        return (...args: unknown[]) => {
          try {
            return target.run(...args);
          } finally {
            changes.ownWrites += 1;
          }
        };
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** FTS5 phrase query: the needle's trigrams in a row, i.e. a literal substring. */
function ftsPhrase(needle: string): string {
  return `"${needle.replace(/"/g, '""')}"`;
}

export const sqliteDialect: StorageDialect = {
  name: 'sqlite',

  serialPrimaryKey(table, column) {
    return table.addColumn(column, 'integer', (col) => col.primaryKey().autoIncrement().notNull());
  },

  async createTransactionTextIndex(db) {
    // An external-content index over the case-folded name, description and category, keyed by
    // the integer primary key `seq` (a rowid alias, so VACUUM never renumbers it).
    // case_sensitive 1: the stored text is folded by the application, the index must not fold it
    // differently.
    const index = sql.raw(TEXT_INDEX);
    const columns = sql.raw(TEXT_COLUMNS.join(', '));
    const values = (row: 'new' | 'old') =>
      sql.raw(TEXT_COLUMNS.map((c) => `${row}.${c}`).join(', '));
    await sql`create virtual table ${index} using fts5(
      ${columns}, content='transactions', content_rowid='seq', tokenize='trigram case_sensitive 1'
    )`.execute(db);
    await sql`create trigger ${sql.raw(`${TEXT_INDEX}_insert`)} after insert on transactions begin
      insert into ${index}(rowid, ${columns}) values (new.seq, ${values('new')});
    end`.execute(db);
    await sql`create trigger ${sql.raw(`${TEXT_INDEX}_delete`)} after delete on transactions begin
      insert into ${index}(${index}, rowid, ${columns}) values ('delete', old.seq, ${values('old')});
    end`.execute(db);
    await sql`create trigger ${sql.raw(`${TEXT_INDEX}_update`)} after update of ${columns} on transactions begin
      insert into ${index}(${index}, rowid, ${columns}) values ('delete', old.seq, ${values('old')});
      insert into ${index}(rowid, ${columns}) values (new.seq, ${values('new')});
    end`.execute(db);
    // Index whatever rows exist already.
    await sql`insert into ${index}(${index}) values ('rebuild')`.execute(db);
  },

  async dropTransactionTextIndex(db) {
    for (const suffix of ['insert', 'delete', 'update']) {
      await sql`drop trigger if exists ${sql.raw(`${TEXT_INDEX}_${suffix}`)}`.execute(db);
    }
    await sql`drop table if exists ${sql.raw(TEXT_INDEX)}`.execute(db);
  },

  whereTransactionTextsContain(query, filters) {
    // Trigrams need three characters; a shorter needle scans the enterprise's rows instead.
    const indexed = filters.filter((f) => [...f.foldedNeedle].length >= 3);
    let narrowed = query;
    for (const f of filters.filter((x) => !indexed.includes(x)))
      narrowed = narrowed.where(likeContains(`transactions.${f.column}`, f.foldedNeedle));
    if (indexed.length === 0)
      return { query: narrowed, creationOrder: sql.ref<number>('transactions.seq') };
    // One MATCH with a column filter per needle. Joined rather than `seq IN (…)`: ordered by the
    // index's own rowid (= seq), SQLite walks the matches in creation order and stops after one
    // page, instead of collecting all of them first.
    const match = indexed.map((f) => `${f.column} : ${ftsPhrase(f.foldedNeedle)}`).join(' AND ');
    const joined = narrowed
      .innerJoin('transactions_text_fts', 'transactions_text_fts.rowid', 'transactions.seq')
      .where(sql<SqlBool>`${sql.table(TEXT_INDEX)} match ${match}`);
    return {
      query: joined as unknown as TransactionsQuery,
      creationOrder: sql.ref<number>('transactions_text_fts.rowid'),
    };
  },

  changeStamp(db) {
    const changes = changeTracking.get(db);
    if (!changes) return undefined;
    // `pragma data_version` costs a read transaction (about 10 µs): under load it is asked at most
    // once per DATA_VERSION_INTERVAL_MS, so another process's commit is seen within that time.
    const now = performance.now();
    if (now - changes.checkedAt >= DATA_VERSION_INTERVAL_MS) {
      changes.dataVersion = Number(changes.dataVersionStatement.get());
      changes.checkedAt = now;
    }
    return `${changes.dataVersion}:${changes.ownWrites}`;
  },

  isUniqueViolation(error) {
    const code = (error as { code?: unknown } | null)?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
};
