// Everything that only SQLite accepts lives here: opening the file with its pragmas, and the FTS5
// trigram indexes that make "contains" searches fast: of transactions (T2) over millions of rows,
// and of pals (P1, C1).
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Expression, type SqlBool } from 'kysely';
import { mayWriteCachedTable } from './cached-tables.js';
import { fold, likeContains } from './text-filters.js';
import {
  cappedCount,
  palTextCondition,
  wherePalTextsLike,
  type StorageDialect,
  type TransactionTextColumn,
  type TransactionsQuery,
} from './storage-dialect.js';
import type { DatabaseSchema } from './schema.js';
import {
  batchCommitted,
  GroupCommitSqliteDialect,
  type GroupCommitCounts,
} from './sqlite-group-commit.js';
import { fileSync, walFileSync } from './wal-sync.js';
import { makeFolder } from '../folders.js';

/** Milliseconds a writer waits for another process's write lock (e.g. the CLI beside the server). */
const BUSY_TIMEOUT_MS = 5000;
// One index per column: transactions of one pal share its description, so a shared index's
// posting lists for a name needle would hold nearly every row (measured: 46 ms → 174 ms p99).
const TEXT_INDEXES = {
  name_key: 'transactions_name_fts',
  description_key: 'transactions_description_fts',
  category_key: 'transactions_category_fts',
} as const satisfies Record<TransactionTextColumn, string>;

// P1/C1's "contains" filters (migration 0006). FTS5 needs a stable integer rowid, which pals (a
// composite primary key; VACUUM may renumber implicit rowids) lacks: the side table pal_texts
// gives each pal one (`seq`), triggers on pals keep it in step, and one trigram index covers its
// four folded columns (an enterprise has few pals: one shared index is enough).
const PAL_TEXT_COLUMNS = ['name_key', 'description_key', 'category_key', 'publisher_key'] as const;
const PAL_TEXTS_FTS = 'pal_texts_fts';

/**
 * Opens (creating if need be) a SQLite database file.
 * - WAL: readers never block the writer;
 * - synchronous=FULL: with WAL, a commit returns only after the log is synced to disk, so an
 *   acknowledged write survives a power cut (NORMAL may lose the last commits). With group
 *   commit the writer runs with NORMAL and the same sync is made off the event loop, before any
 *   caller is answered (wal-sync.ts);
 * - foreign_keys=ON: SQLite leaves them off by default;
 * - group commit (unless turned off): concurrent transactions share one COMMIT, so one fsync,
 *   and the log's checkpoints make their syncs off the event loop (wal-checkpoints.ts).
 */
export function openSqlite(path: string, groupCommit = true): Kysely<DatabaseSchema> {
  const memory = path === ':memory:';
  if (!memory) makeFolder(dirname(path));
  const grouping = groupCommit && !memory;
  // With group commit the log's sync at each COMMIT runs off the event loop (wal-sync.ts).
  const writer = openConnection(path, grouping ? 'NORMAL' : 'FULL', grouping);
  // A second connection reads what is committed; an in-memory database has only the one.
  const reader = grouping ? openConnection(path, 'FULL') : undefined;
  // Absolute: the log is opened at the first sync, whatever the working directory is by then.
  const log = grouping ? walFileSync(resolve(path)) : undefined;
  const databaseFile = grouping ? fileSync(resolve(path)) : undefined;
  const changes: ChangeTracking = {
    // Asked of the writer: its data_version moves with other processes' commits, never with its
    // own (which are counted at COMMIT, below), so the client cache survives this node's writes.
    dataVersionStatement: writer.prepare('pragma data_version').pluck(),
    dataVersion: 0,
    checkedAt: -Infinity,
    ownWrites: 0,
    cachedWritesUncommitted: false,
  };
  const grouped = reader
    ? new GroupCommitSqliteDialect({
        writer: withStatementCache(writer, changes),
        reader: withStatementCache(reader, changes),
        sync: log!.sync,
        checkpoints: {
          openPin: () => openConnection(path, 'FULL'),
          syncDatabaseFile: databaseFile!.sync,
        },
        // Reads see a write once it is committed: a value cached in between must go then too.
        beforeCommit: pendingTextIndexer(writer),
        onCommit: () => {
          if (!changes.cachedWritesUncommitted) return;
          changes.cachedWritesUncommitted = false;
          changes.ownWrites += 1;
        },
        // One reading of data_version for both: each read's check freshens the change stamp.
        dataVersion: () => readDataVersion(changes),
        onClose: async () => {
          await log!.close();
          await databaseFile!.close();
        },
      })
    : undefined;
  const db = new Kysely<DatabaseSchema>({
    dialect: grouped ?? new SqliteDialect({ database: withStatementCache(writer, changes) }),
  });
  changeTracking.set(db, changes);
  if (grouped) commitCounts.set(db, grouped.counts);
  return db;
}

function openConnection(
  path: string,
  synchronous: 'FULL' | 'NORMAL',
  defersTextIndex = false,
): Database.Database {
  const database = new Database(path);
  database.function(DEFERS_TEXT_INDEX, () => (defersTextIndex ? 1 : 0));
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${synchronous}`);
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return database;
}

const commitCounts = new WeakMap<object, GroupCommitCounts>();

/** How a SQLite database's group commit has gone so far; undefined when it is off. */
export function groupCommitCounts(db: Kysely<DatabaseSchema>): GroupCommitCounts | undefined {
  return commitCounts.get(db);
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
  /** This process's writes to a cached table (storage/cached-tables.ts), each counted as it runs. */
  ownWrites: number;
  /** Such a write ran since the last COMMIT: that COMMIT counts once more (reads see it then). */
  cachedWritesUncommitted: boolean;
}

/** How stale another process's commits may be seen (own writes are seen at once). */
const DATA_VERSION_INTERVAL_MS = 1;

const changeTracking = new WeakMap<object, ChangeTracking>();

/**
 * `pragma data_version`, which costs a read transaction (about 10 µs): under load it is asked at
 * most once per DATA_VERSION_INTERVAL_MS, so another process's commit is seen within that time.
 */
function dataVersion(changes: ChangeTracking): number {
  return performance.now() - changes.checkedAt >= DATA_VERSION_INTERVAL_MS
    ? readDataVersion(changes)
    : changes.dataVersion;
}

/** `pragma data_version` read now, and kept as the latest reading. */
function readDataVersion(changes: ChangeTracking): number {
  changes.dataVersion = Number(changes.dataVersionStatement.get());
  changes.checkedAt = performance.now();
  return changes.dataVersion;
}

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
      // `readonly`, not `reader`: a write with RETURNING is a reader, run with all() or get().
      if (!statement.readonly && mayWriteCachedTable(source))
        statement = countingWrites(statement, changes);
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

/** A statement that may write a cached table, counting its runs (see ChangeTracking). */
function countingWrites(
  statement: Database.Statement,
  changes: ChangeTracking,
): Database.Statement {
  return new Proxy(statement, {
    get(target, prop, receiver) {
      if (prop === 'run' || prop === 'all' || prop === 'get' || prop === 'iterate')
        return (...args: unknown[]) => {
          try {
            return (target[prop] as (...a: unknown[]) => unknown)(...args);
          } finally {
            changes.ownWrites += 1;
            changes.cachedWritesUncommitted = true;
          }
        };
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * listenOutbox's listeners per database handle, keyed by its adapter: a transaction of a handle
 * shares the handle's adapter, so an announcement inside a transaction reaches them.
 */
const outboxListeners = new WeakMap<object, Set<() => void>>();

/** FTS5 phrase query: the needle's trigrams in a row, i.e. a literal substring. */
function ftsPhrase(needle: string): string {
  return `"${needle.replace(/"/g, '""')}"`;
}

/**
 * The name of the SQL function that tells the text indexes' triggers whether this connection
 * defers its rows' indexing to the end of its batch (group commit's writer) or indexes them at
 * once (every other connection). Every connection openSqlite opens defines it.
 */
const DEFERS_TEXT_INDEX = 'pal_defers_text_index';
/** The rows inserted by a deferring connection and not yet in the text indexes. */
const PENDING_TEXTS = 'transactions_text_pending';

/**
 * The triggers that keep the transaction text indexes in step with `transactions`. FTS5 writes
 * what it holds to disk at every SAVEPOINT and RELEASE, and group commit makes each caller's
 * transaction a savepoint: indexing each insert at once cost a T1 request nearly half of its
 * time (docs/performance.md). So a deferring connection only notes the new row's `seq`, and
 * indexPendingTexts indexes the noted rows before the batch's COMMIT, in the same transaction:
 * what is committed is always indexed. Rows still noted are skipped by the update and delete
 * triggers (FTS5's external-content delete needs the values it indexed, and those rows have none
 * yet); the COMMIT indexes their values as they are then. `immediate` is the design before it
 * (a migration's down).
 */
async function createTextIndexTriggers(
  db: Kysely<any>,
  mode: 'deferrable' | 'immediate',
): Promise<void> {
  const deferrable = mode === 'deferrable';
  if (deferrable) {
    await sql`create table if not exists ${sql.raw(PENDING_TEXTS)} (seq integer primary key)`.execute(
      db,
    );
    await sql`create trigger ${sql.raw(`${PENDING_TEXTS}_insert`)} after insert on transactions
      when ${sql.raw(DEFERS_TEXT_INDEX)}() begin
        insert into ${sql.raw(PENDING_TEXTS)}(seq) values (new.seq);
      end`.execute(db);
    // One trigger for a deleted row: the indexes forget it unless it was only noted, and only
    // then is its note removed (statements of one trigger run in order; separate triggers would
    // depend on SQLite's order of firing them).
    const forget = Object.entries(TEXT_INDEXES).map(
      ([column, table]) =>
        `insert into ${table}(${table}, rowid, ${column}) select 'delete', old.seq, old.${column}
          where not exists (select 1 from ${PENDING_TEXTS} where seq = old.seq);`,
    );
    await sql`create trigger ${sql.raw(`${PENDING_TEXTS}_delete`)} after delete on transactions begin
        ${sql.raw(forget.join('\n'))}
        delete from ${sql.raw(PENDING_TEXTS)} where seq = old.seq;
      end`.execute(db);
  }
  const atOnce = sql.raw(deferrable ? `when not ${DEFERS_TEXT_INDEX}()` : '');
  const indexed = sql.raw(
    deferrable ? `when not exists (select 1 from ${PENDING_TEXTS} where seq = old.seq)` : '',
  );
  for (const [column, table] of Object.entries(TEXT_INDEXES)) {
    const index = sql.raw(table);
    const col = sql.raw(column);
    await sql`create trigger ${sql.raw(`${table}_insert`)} after insert on transactions ${atOnce} begin
      insert into ${index}(rowid, ${col}) values (new.seq, new.${col});
    end`.execute(db);
    if (!deferrable)
      await sql`create trigger ${sql.raw(`${table}_delete`)} after delete on transactions begin
        insert into ${index}(${index}, rowid, ${col}) values ('delete', old.seq, old.${col});
      end`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_update`)} after update of ${col} on transactions ${indexed} begin
      insert into ${index}(${index}, rowid, ${col}) values ('delete', old.seq, old.${col});
      insert into ${index}(rowid, ${col}) values (new.seq, new.${col});
    end`.execute(db);
  }
}

async function dropTextIndexTriggers(db: Kysely<any>): Promise<void> {
  const names = Object.values(TEXT_INDEXES).flatMap((table) =>
    ['insert', 'delete', 'update'].map((suffix) => `${table}_${suffix}`),
  );
  for (const name of [...names, `${PENDING_TEXTS}_insert`, `${PENDING_TEXTS}_delete`])
    await sql`drop trigger if exists ${sql.raw(name)}`.execute(db);
  await sql`drop table if exists ${sql.raw(PENDING_TEXTS)}`.execute(db);
}

/** The statements that index the noted rows and clear their notes (see createTextIndexTriggers). */
const INDEX_PENDING_TEXTS = [
  ...Object.entries(TEXT_INDEXES).map(
    ([column, table]) =>
      `insert into ${table}(rowid, ${column}) select t.seq, t.${column} from ${PENDING_TEXTS} p join transactions t on t.seq = p.seq`,
  ),
  `delete from ${PENDING_TEXTS}`,
];

/** Indexes the rows a deferring connection noted, in `db`'s transaction (a migration's down). */
async function indexPendingTexts(db: Kysely<any>): Promise<void> {
  for (const statement of INDEX_PENDING_TEXTS) await sql.raw(statement).execute(db);
}

/**
 * indexPendingTexts on a connection, with statements prepared once; run before each batch's
 * COMMIT. Nothing to do costs one look-up. Before migration 0025 (no such table), nothing to do.
 */
function pendingTextIndexer(writer: Database.Database): () => void {
  let prepared: { any: Database.Statement; steps: Database.Statement[] } | undefined;
  return () => {
    if (!prepared) {
      const table = "select 1 from sqlite_master where type = 'table' and name = ?";
      if (!writer.prepare(table).get(PENDING_TEXTS)) return;
      prepared = {
        any: writer.prepare(`select exists (select 1 from ${PENDING_TEXTS})`).pluck(),
        steps: INDEX_PENDING_TEXTS.map((statement) => writer.prepare(statement)),
      };
    }
    let pending: unknown;
    try {
      pending = prepared.any.get();
    } catch (error) {
      // The table is gone (a migration's down): look again next time. Anything else fails the batch.
      if (!String(error).includes(`no such table: ${PENDING_TEXTS}`)) throw error;
      prepared = undefined;
      return;
    }
    if (pending) for (const step of prepared.steps) step.run();
  };
}

export const sqliteDialect: StorageDialect = {
  name: 'sqlite',
  binaryType: 'blob',

  serialPrimaryKey(table, column) {
    return table.addColumn(column, 'integer', (col) => col.primaryKey().autoIncrement().notNull());
  },

  async createTransactionTextIndex(db) {
    // External-content indexes over the case-folded texts, keyed by the integer primary key `seq`
    // (a rowid alias, so VACUUM never renumbers it). case_sensitive 1: the stored text is folded
    // by the application, the index must not fold it differently.
    for (const [column, table] of Object.entries(TEXT_INDEXES)) {
      await sql`create virtual table ${sql.raw(table)} using fts5(
        ${sql.raw(column)}, content='transactions', content_rowid='seq', tokenize='trigram case_sensitive 1'
      )`.execute(db);
    }
    await createTextIndexTriggers(db, 'deferrable');
    // Index whatever rows exist already (noted ones included: nothing is left to note).
    for (const table of Object.values(TEXT_INDEXES))
      await sql`insert into ${sql.raw(table)}(${sql.raw(table)}) values ('rebuild')`.execute(db);
    await sql`delete from ${sql.raw(PENDING_TEXTS)}`.execute(db);
  },

  async dropTransactionTextIndex(db) {
    await dropTextIndexTriggers(db);
    for (const table of Object.values(TEXT_INDEXES))
      await sql`drop table if exists ${sql.raw(table)}`.execute(db);
  },

  async deferTransactionTextIndex(db) {
    await dropTextIndexTriggers(db);
    await createTextIndexTriggers(db, 'deferrable');
  },

  async undeferTransactionTextIndex(db) {
    await indexPendingTexts(db);
    await dropTextIndexTriggers(db);
    await createTextIndexTriggers(db, 'immediate');
  },

  whereTransactionTextsContain(query, filters) {
    // Trigrams need three characters; a shorter needle scans the enterprise's rows instead.
    let narrowed = query;
    let creationOrder: Expression<number> | undefined;
    for (const f of filters) {
      if ([...f.foldedNeedle].length < 3) {
        narrowed = narrowed.where(likeContains(`transactions.${f.column}`, f.foldedNeedle));
        continue;
      }
      // Joined rather than `seq IN (…)`: ordered by the index's own rowid (= seq), SQLite walks
      // the matches in creation order and stops after one page instead of collecting them all.
      // The three index tables have one shape; typed as one of them so the join type-checks.
      const table = TEXT_INDEXES[f.column] as typeof TEXT_INDEXES.name_key;
      narrowed = narrowed
        .innerJoin(table, `${table}.rowid`, 'transactions.seq')
        .where(
          sql<SqlBool>`${sql.table(table)} match ${ftsPhrase(f.foldedNeedle)}`,
        ) as unknown as TransactionsQuery;
      creationOrder ??= sql.ref<number>(`${table}.rowid`);
    }
    return { query: narrowed, creationOrder: creationOrder ?? sql.ref<number>('transactions.seq') };
  },

  // Each process counts its rate limits in memory (http/rate-limits.ts): no table.
  async createRateCountTable() {},

  async dropRateCountTable() {},

  async createPalTextIndex(db) {
    const columns = sql.raw(PAL_TEXT_COLUMNS.join(', '));
    const values = (row: 'new' | 'old') =>
      sql.raw(PAL_TEXT_COLUMNS.map((c) => `${row}.${c}`).join(', '));
    await sql`create table pal_texts (
      seq integer primary key autoincrement,
      enterprise_id text not null,
      pal_id text not null,
      name_key text,
      description_key text,
      category_key text,
      publisher_key text,
      unique (enterprise_id, pal_id)
    )`.execute(db);
    await sql`insert into pal_texts (enterprise_id, pal_id, ${columns})
      select enterprise_id, id, ${columns} from pals order by enterprise_id, id`.execute(db);
    await sql`create trigger pal_texts_pals_insert after insert on pals begin
      insert into pal_texts (enterprise_id, pal_id, ${columns})
        values (new.enterprise_id, new.id, ${values('new')});
    end`.execute(db);
    await sql`create trigger pal_texts_pals_update
      after update of enterprise_id, id, ${columns} on pals begin
      update pal_texts set enterprise_id = new.enterprise_id, pal_id = new.id,
        ${sql.raw(PAL_TEXT_COLUMNS.map((c) => `${c} = new.${c}`).join(', '))}
        where enterprise_id = old.enterprise_id and pal_id = old.id;
    end`.execute(db);
    // Also run for the rows that deleting an enterprise cascades to.
    await sql`create trigger pal_texts_pals_delete after delete on pals begin
      delete from pal_texts where enterprise_id = old.enterprise_id and pal_id = old.id;
    end`.execute(db);

    const index = sql.raw(PAL_TEXTS_FTS);
    await sql`create virtual table ${index} using fts5(
      ${columns}, content='pal_texts', content_rowid='seq', tokenize='trigram case_sensitive 1'
    )`.execute(db);
    await sql`create trigger pal_texts_fts_insert after insert on pal_texts begin
      insert into ${index}(rowid, ${columns}) values (new.seq, ${values('new')});
    end`.execute(db);
    await sql`create trigger pal_texts_fts_delete after delete on pal_texts begin
      insert into ${index}(${index}, rowid, ${columns}) values ('delete', old.seq, ${values('old')});
    end`.execute(db);
    await sql`create trigger pal_texts_fts_update after update of ${columns} on pal_texts begin
      insert into ${index}(${index}, rowid, ${columns}) values ('delete', old.seq, ${values('old')});
      insert into ${index}(rowid, ${columns}) values (new.seq, ${values('new')});
    end`.execute(db);
    await sql`insert into ${index}(${index}) values ('rebuild')`.execute(db);
  },

  async dropPalTextIndex(db) {
    for (const trigger of [
      'pal_texts_fts_insert',
      'pal_texts_fts_delete',
      'pal_texts_fts_update',
      'pal_texts_pals_insert',
      'pal_texts_pals_update',
      'pal_texts_pals_delete',
    ]) {
      await sql`drop trigger if exists ${sql.raw(trigger)}`.execute(db);
    }
    await sql`drop table if exists ${sql.raw(PAL_TEXTS_FTS)}`.execute(db);
    await sql`drop table if exists pal_texts`.execute(db);
  },

  wherePalTextsMatch(query, filters, matchAny) {
    // Trigrams need three characters. ANDed, a shorter needle stays a LIKE beside the index
    // look-up; ORed, any shorter needle sends all of them to LIKE over the enterprise's pals.
    const contains = filters.filter((f) => !f.exact);
    const indexed = contains.filter((f) => [...fold(f.value)].length >= 3);
    if (indexed.length === 0 || (matchAny && indexed.length < contains.length)) {
      return wherePalTextsLike(query, filters, matchAny);
    }
    // One FTS5 query: each needle a phrase (a literal substring) in its own column.
    const match = indexed
      .map((f) => `${f.column}_key : ${ftsPhrase(fold(f.value))}`)
      .join(matchAny ? ' OR ' : ' AND ');
    const throughIndex = sql<SqlBool>`(pals.enterprise_id, pals.id) in (
      select pal_texts.enterprise_id, pal_texts.pal_id from pal_texts where pal_texts.seq in (
        select rowid from ${sql.raw(PAL_TEXTS_FTS)} where ${sql.raw(PAL_TEXTS_FTS)} match ${match}))`;
    const conditions = [
      throughIndex,
      ...filters.filter((f) => !indexed.includes(f)).map(palTextCondition),
    ];
    return query.where((eb) => (matchAny ? eb.or(conditions) : eb.and(conditions)));
  },

  async createChangeStampTriggers() {
    // Nothing to keep: `pragma data_version` tells of other connections' commits.
  },

  async dropChangeStampTriggers() {},

  changeStampBoundMs: DATA_VERSION_INTERVAL_MS,

  async refreshChangeStamp() {},

  runExclusively(_db, _name, work) {
    return work();
  },

  forUpdate(query) {
    return query;
  },

  async announceOutbox(db) {
    // Called inside the writing transaction: the listeners are told once it is durable (with
    // group commit, reads see committed data only). Without group commit a listener's first query
    // waits for the one connection, which the transaction holds until it ends.
    const adapter = db.getExecutor().adapter;
    const announce = () => {
      for (const listener of outboxListeners.get(adapter) ?? []) listener();
    };
    const committed = batchCommitted(adapter);
    if (committed) committed.then(announce, () => {});
    else announce();
  },

  async listenOutbox(db, listener) {
    const key = db.getExecutor().adapter;
    let listeners = outboxListeners.get(key);
    if (!listeners) outboxListeners.set(key, (listeners = new Set()));
    const own = () => listener();
    listeners.add(own);
    return async () => {
      listeners.delete(own);
    };
  },

  changeStamp(db) {
    const changes = changeTracking.get(db);
    if (!changes) return undefined;
    return `${dataVersion(changes)}:${changes.ownWrites}`;
  },

  sharedChangeStamp(db) {
    // data_version moves only with other connections' commits, never with this one's.
    const changes = changeTracking.get(db);
    return changes ? String(dataVersion(changes)) : undefined;
  },

  countUpTo(db, query, cap) {
    return cappedCount(db, query, cap);
  },

  isUniqueViolation(error) {
    const code = (error as { code?: unknown } | null)?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },

  isLockNotAvailable() {
    // Writers take turns: no row lock to find held.
    return false;
  },
};
