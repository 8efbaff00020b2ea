// Group commit for SQLite (docs/performance.md): the database transactions of concurrent requests
// share one COMMIT, and so one fsync, instead of paying one each.
//
// Two connections to the file. The writer is used by one caller at a time: a caller's
// transaction becomes a SAVEPOINT inside a batch transaction that the first of them opens (BEGIN
// IMMEDIATE); its commit RELEASEs the savepoint, lets the next caller in, and waits for the
// batch's COMMIT, which runs once the event loop has run what was ready (setImmediate): callers
// that came meanwhile joined the batch. The COMMIT writes the log; its fsync runs off the event
// loop (wal-sync.ts), and the batch is answered once it has finished. The reader takes every
// statement outside a transaction that only reads, at once and without waiting for the writer: in
// WAL mode it sees committed data only, and a read that may have seen a COMMIT whose sync is still
// running waits for that sync, so no caller learns of a write that may yet be lost. So:
// - a transaction resolves only once the COMMIT that holds its writes is on disk; when that
//   COMMIT (or its sync) fails, every transaction of the batch rejects with its error;
// - a transaction that rolls back undoes only its own savepoint;
// - a write outside a transaction joins the open batch (or commits alone when there is none) and
//   is answered once it is durable.
import type Database from 'better-sqlite3';
import {
  CompiledQuery,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import { deferred, type Deferred } from './deferred.js';
import { checkpointNow, WalCheckpoints, type CheckpointCounts } from './wal-checkpoints.js';
import { WalSync, type LogSync } from './wal-sync.js';

/** Statements SQLite runs only outside a transaction. */
const OUTSIDE_TRANSACTIONS = /^\s*(vacuum|attach|detach|pragma)\b/i;

/** The savepoint of one caller's transaction inside the batch. */
const UNIT = 'pal_group_unit';

/** A batch's COMMIT, once durable: its callers wait on `promise`. */
type Batch = Deferred;

/** How the batches went, for the bench and the tests. */
export interface GroupCommitCounts extends CheckpointCounts {
  /** COMMITs run (each one fsync). */
  commits: number;
  /** Transactions committed through them. */
  transactions: number;
  /** Batches whose COMMIT failed. */
  failedCommits: number;
  /** Syncs of the log (fdatasync), each covering the COMMITs written before it began. */
  syncs: number;
}

/** A database's driver by its adapter, which its transactions share (see batchCommitted). */
const drivers = new WeakMap<object, GroupCommitDriver>();

/**
 * Resolves once the batch that the caller's open transaction joined is durable; undefined when
 * `adapter` (`db.getExecutor().adapter`) is not of a group-committing database. Rejects when the
 * batch fails to commit.
 */
export function batchCommitted(adapter: object): Promise<void> | undefined {
  return drivers.get(adapter)?.openBatchCommitted();
}

export class GroupCommitSqliteDialect implements Dialect {
  readonly counts: GroupCommitCounts = {
    commits: 0,
    transactions: 0,
    failedCommits: 0,
    syncs: 0,
    checkpoints: 0,
    failedCheckpoints: 0,
  };
  readonly #driver: GroupCommitDriver;

  constructor(options: {
    /** Opened with synchronous=NORMAL: `sync` makes its COMMITs durable. */
    writer: Database.Database;
    reader: Database.Database;
    /** Makes what the writer has written to the log durable (wal-sync.ts). */
    sync: LogSync;
    /**
     * Given, the log's checkpoints run with their syncs off the event loop (wal-checkpoints.ts)
     * instead of inside the writer's COMMITs; without it, SQLite's own.
     */
    checkpoints?: {
      /**
       * Opens a third connection to the file, for the read transaction around each checkpoint
       * (at the first checkpoint: a process that writes little never opens it).
       */
      openPin: () => Database.Database;
      /** fdatasync of the database file. */
      syncDatabaseFile: LogSync;
      /** A checkpoint after this many COMMITs (by default COMMITS_PER_CHECKPOINT). */
      commitsPerCheckpoint?: number;
      /** See CheckpointParts (tests; by default the process ends). */
      fileNotDurable?: (error: unknown) => void;
    };
    /**
     * Run on the writer inside each batch, after its last caller and before its COMMIT (the text
     * indexes' deferred rows, sqlite.ts); an error fails the batch.
     */
    beforeCommit?: () => void;
    /** Called after each COMMIT that succeeded (its data visible to the reader). */
    onCommit?: () => void;
    /**
     * The writer's `pragma data_version`, read now (sqlite.ts shares its reading with the change
     * stamp); by default asked of the writer here.
     */
    dataVersion?: () => unknown;

    /** Called once the driver is destroyed and both connections are closed. */
    onClose?: () => Promise<void>;
  }) {
    this.#driver = new GroupCommitDriver(options, this.counts);
  }

  createDriver(): Driver {
    return this.#driver;
  }
  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }
  createAdapter() {
    const adapter = new SqliteAdapter();
    drivers.set(adapter, this.#driver);
    return adapter;
  }
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}

/** One use of the database, from acquire to release; it holds the writer only while it writes. */
class Lease implements DatabaseConnection {
  /** The batch this lease's transaction joined; undefined outside a transaction. */
  batch: Batch | undefined;
  /** It holds the writer now. */
  holdsWriter = false;

  constructor(private readonly driver: GroupCommitDriver) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute<R>(this, compiledQuery);
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiledQuery.query))
      throw new Error('SQLite streams only select queries');
    const { rows } = await this.driver.execute<R>(this, compiledQuery);
    for (const row of rows) yield { rows: [row] };
  }
}

class GroupCommitDriver implements Driver {
  readonly #writerMutex = new Mutex();
  #open: Batch | undefined;
  /** Transactions released into the open batch, waiting for its COMMIT. */
  #waiting = 0;
  /** A caller is inside its savepoint: the batch cannot commit now. */
  #unitActive = false;
  #commitScheduled = false;

  private readonly writer: Database.Database;
  private readonly reader: Database.Database;
  private readonly log: WalSync;
  private readonly beforeCommit: () => void;
  private readonly onCommit: () => void;
  /** Another process's COMMIT may not be synced yet: a read that saw it waits for a sync. */
  private readonly foreignCommits: () => boolean;
  private readonly onClose: () => Promise<void>;
  private readonly checkpoints: WalCheckpoints | undefined;
  #pin: Database.Database | undefined;

  constructor(
    options: ConstructorParameters<typeof GroupCommitSqliteDialect>[0],
    private readonly counts: GroupCommitCounts,
  ) {
    this.writer = options.writer;
    this.reader = options.reader;
    this.log = new WalSync(options.sync, () => (counts.syncs += 1));
    this.beforeCommit = options.beforeCommit ?? (() => {});
    this.onCommit = options.onCommit ?? (() => {});
    this.foreignCommits = foreignCommitsOf(options.dataVersion ?? dataVersionOf(options.writer));
    this.onClose = options.onClose ?? (async () => {});
    const checkpoints = options.checkpoints;
    this.checkpoints =
      checkpoints &&
      new WalCheckpoints(
        this.writer,
        () =>
          this.#withoutWrites(() =>
            checkpointNow({
              pin: (this.#pin ??= checkpoints.openPin()),
              copier: this.reader,
              syncLog: () => this.log.syncNow(),
              syncDatabaseFile: checkpoints.syncDatabaseFile,
              fileNotDurable: checkpoints.fileNotDurable,
            }),
          ),
        counts,
        checkpoints.commitsPerCheckpoint,
      );
  }

  async init(): Promise<void> {}

  /** The open batch's COMMIT (resolved at once when none is open). */
  openBatchCommitted(): Promise<void> {
    return this.#open?.promise ?? Promise.resolve();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Lease(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    await this.#holdWriter(lease);
    const batch = this.#openBatch();
    this.writer.exec(`savepoint ${UNIT}`);
    this.#unitActive = true;
    lease.batch = batch;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    const batch = lease.batch!;
    try {
      this.writer.exec(`release ${UNIT}`);
    } catch (error) {
      this.#endIfRolledBack(error);
      throw error;
    }
    this.#unitActive = false;
    lease.batch = undefined;
    this.#waiting += 1;
    // Let the next caller join the batch while this one waits for the COMMIT.
    this.#releaseWriter(lease);
    this.#scheduleCommit();
    await batch.promise;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    const batch = lease.batch;
    lease.batch = undefined;
    // Its COMMIT failed: the batch has ended already, and the writer is another caller's now.
    if (!lease.holdsWriter) return;
    try {
      // SQLite may have rolled back the whole batch already (a RAISE(ROLLBACK), a full disk).
      if (this.writer.inTransaction) {
        this.writer.exec(`rollback to ${UNIT}`);
        this.writer.exec(`release ${UNIT}`);
      }
    } finally {
      this.#unitActive = false;
      this.#endIfRolledBack();
      this.#releaseWriter(lease);
      this.#scheduleCommit();
    }
    // What it read on the writer may include COMMITs not yet synced (and its batch-mates' work):
    // its caller, who may answer from that, goes on once the batch's COMMIT is durable, which
    // covers every COMMIT before it. How that batch ends is not this transaction's outcome.
    await batch?.promise.catch(() => {});
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await this.execute(connection as Lease, CompiledQuery.raw(`savepoint "${name}"`));
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await this.execute(connection as Lease, CompiledQuery.raw(`rollback to "${name}"`));
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await this.execute(connection as Lease, CompiledQuery.raw(`release "${name}"`));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.#releaseWriter(connection as Lease);
  }

  async destroy(): Promise<void> {
    // First: a checkpoint under way holds the writer until it ends.
    await this.checkpoints?.close();
    await this.#writerMutex.lock();
    this.#commitOpenBatch();
    await this.log.pending()?.catch(() => {}); // its callers have been told
    if (this.checkpoints) {
      // What this process wrote since its last checkpoint (wal-checkpoints.ts); the last
      // connection to close checkpoints in any case, and removes the log. Not after a failed
      // sync (nothing may reach the database then), and a failure here leaves the log as it is.
      try {
        this.log.throwIfFailed();
        this.writer.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // The log keeps what it holds; the next process to open the file reads it.
      }
    }
    this.#pin?.close();
    this.reader.close();
    this.writer.close();
    await this.onClose();
  }

  /**
   * Inside a transaction: the statement runs in the caller's savepoint. Outside one: a read runs
   * on the reader at once; a write waits for the writer, joins the open batch (if any) and is
   * answered once that batch is durable.
   */
  async execute<R>(lease: Lease, compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (lease.batch) return run<R>(this.writer, compiledQuery);
    const read = readOnly(this.reader, compiledQuery.sql);
    if (read) {
      const result = runPrepared<R>(read, compiledQuery);
      // It may have read a COMMIT whose sync is still running: ours, or another process's.
      if (this.foreignCommits()) this.log.foreignCommit();
      const pending = this.log.pending();
      if (pending) await pending;
      return result;
    }
    await this.#holdWriter(lease);
    let result: QueryResult<R>;
    const batch = this.#open;
    try {
      result = batch ? run<R>(this.writer, compiledQuery) : this.#runAlone<R>(compiledQuery);
    } catch (error) {
      this.#endIfRolledBack(error);
      throw error;
    } finally {
      this.#releaseWriter(lease);
    }
    if (batch) {
      this.#scheduleCommit();
      await batch.promise;
    } else {
      await this.log.committed();
    }
    return result;
  }

  /**
   * A write outside a transaction with no batch open: committed at once, as SQLite's autocommit
   * would (so the write lock is not held across a turn of the event loop), with the batch's work
   * before its COMMIT.
   */
  #runAlone<R>(compiledQuery: CompiledQuery): QueryResult<R> {
    this.log.throwIfFailed();
    // VACUUM, ATTACH and the like cannot run inside a transaction, and index nothing.
    if (OUTSIDE_TRANSACTIONS.test(compiledQuery.sql)) {
      const result = run<R>(this.writer, compiledQuery);
      this.onCommit();
      return result;
    }
    this.writer.exec('begin immediate');
    try {
      const result = run<R>(this.writer, compiledQuery);
      this.beforeCommit();
      this.writer.exec('commit');
      this.counts.commits += 1;
      this.onCommit();
      this.checkpoints?.committed();
      return result;
    } catch (error) {
      if (this.writer.inTransaction) this.writer.exec('rollback');
      throw error;
    }
  }

  /** Runs `work` with the writer held and no batch open: writers wait for it. */
  async #withoutWrites<T>(work: () => Promise<T>): Promise<T> {
    await this.#writerMutex.lock();
    try {
      this.#commitOpenBatch();
      return await work();
    } finally {
      this.#writerMutex.unlock();
    }
  }

  #openBatch(): Batch {
    this.log.throwIfFailed();
    this.#endIfRolledBack();
    if (!this.#open) {
      this.writer.exec('begin immediate');
      this.#open = deferred();
    }
    return this.#open;
  }

  async #holdWriter(lease: Lease): Promise<void> {
    if (lease.holdsWriter) return;
    await this.#writerMutex.lock();
    lease.holdsWriter = true;
  }

  #releaseWriter(lease: Lease): void {
    if (!lease.holdsWriter) return;
    lease.holdsWriter = false;
    this.#writerMutex.unlock();
  }

  /** The open batch commits once the event loop has run what is ready now (they may join it). */
  #scheduleCommit(): void {
    if (this.#commitScheduled) return;
    this.#commitScheduled = true;
    setImmediate(() => {
      this.#commitScheduled = false;
      // A caller inside its savepoint schedules the commit again when it ends.
      if (!this.#unitActive) this.#commitOpenBatch();
    });
  }

  /**
   * When SQLite has rolled back the open batch by itself (a trigger's RAISE(ROLLBACK), a full disk,
   * an I/O error), every caller waiting for it is told, and the next caller opens a new one.
   */
  #endIfRolledBack(cause?: unknown): void {
    const batch = this.#open;
    if (!batch || this.writer.inTransaction) return;
    this.#open = undefined;
    this.#waiting = 0;
    this.#unitActive = false;
    this.counts.failedCommits += 1;
    batch.reject(
      new Error('the database rolled back the batch of transactions this one was in', { cause }),
    );
  }

  #commitOpenBatch(): void {
    const batch = this.#open;
    if (!batch) return;
    const transactions = this.#waiting;
    this.#open = undefined;
    this.#waiting = 0;
    try {
      // After a failed sync nothing more may reach the log (wal-sync.ts): the batch rolls back.
      this.log.throwIfFailed();
      this.beforeCommit();
      this.writer.exec('commit');
    } catch (error) {
      // A COMMIT that fails (a deferred constraint, a full disk, an I/O error) may leave the
      // transaction open: end it, so that nothing of the batch stays.
      try {
        if (this.writer.inTransaction) this.writer.exec('rollback');
      } catch {
        // The connection ended the transaction itself.
      }
      this.counts.failedCommits += 1;
      batch.reject(error);
      return;
    }
    this.counts.commits += 1;
    this.counts.transactions += transactions;
    this.onCommit();
    this.checkpoints?.committed();
    this.log.committed().then(batch.resolve, (error: unknown) => {
      this.counts.failedCommits += 1;
      batch.reject(error);
    });
  }
}

/**
 * The reader's prepared statement when the statement only reads. One that the reader cannot
 * prepare (a table the writer has just created) goes to the writer, and so does one that returns
 * no rows: SQLite calls `drop trigger if exists` of a trigger it does not see read-only, yet runs
 * it as a write, which on the reader waits for the writer's lock while holding the event loop.
 */
function readOnly(reader: Database.Database, source: string): Database.Statement | undefined {
  try {
    const statement = reader.prepare(source);
    return statement.readonly && statement.reader ? statement : undefined;
  } catch {
    return undefined;
  }
}

function run<R>(database: Database.Database, compiledQuery: CompiledQuery): QueryResult<R> {
  return runPrepared(database.prepare(compiledQuery.sql), compiledQuery);
}

function runPrepared<R>(
  statement: Database.Statement,
  compiledQuery: CompiledQuery,
): QueryResult<R> {
  const parameters = compiledQuery.parameters as unknown[];
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** One user of the connection at a time, in the order they asked. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  #unlockCurrent: (() => void) | undefined;

  async lock(): Promise<void> {
    const previous = this.#tail;
    let unlock!: () => void;
    this.#tail = new Promise<void>((done) => (unlock = done));
    await previous;
    this.#unlockCurrent = unlock;
  }

  unlock(): void {
    const unlock = this.#unlockCurrent;
    this.#unlockCurrent = undefined;
    unlock?.();
  }
}

/** The writer's `pragma data_version`: it moves with other connections' commits only. */
function dataVersionOf(writer: Database.Database): () => unknown {
  const statement = writer.prepare('pragma data_version').pluck();
  return () => statement.get();
}

/**
 * Whether another process has committed since the last call, by the writer's data_version.
 * Asked after every read on the reader (a few µs).
 */
function foreignCommitsOf(dataVersion: () => unknown): () => boolean {
  let seen = dataVersion();
  return () => {
    const now = dataVersion();
    if (now === seen) return false;
    seen = now;
    return true;
  };
}
