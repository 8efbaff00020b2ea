// Checkpoints of group commit's log with their syncs off the event loop (docs/decisions.md,
// "Checkpoints without their syncs on the event loop"). SQLite's own checkpoint runs inside the
// COMMIT that takes the log past 1,000 pages: it syncs the log, copies its pages into the database
// file and syncs that file, all on the event loop: some 5 ms every 15 batches under load, about a
// tenth of a T1's time there (docs/performance.md, "Checkpoints off the event loop").
//
// Here the writer's automatic checkpoints are off, and every few COMMITs the same steps run with
// this process's writes held: the log's sync in libuv's thread pool, the copy on the event loop
// with the syncs of SQLite's own checkpoint left out (they are made here), the database file's
// sync in the pool, all inside a read transaction that keeps any writer from starting the log
// afresh until the file is durable (checkpointNow; what that leaves open is in decisions.md). The event loop goes on serving everything
// else meanwhile; this process's writers wait, and join one batch when the checkpoint ends.
//
// Should a checkpoint fail, SQLite's own are turned back on for good: it only goes back to costing
// the event loop. Should the database file's sync fail after a copy, the process ends (see
// endTheProcess). A process checkpoints its own writes once more when it closes its database: a
// CLI command may commit fewer times than a checkpoint waits for.
import type Database from 'better-sqlite3';
import type { LogSync } from './wal-sync.js';

/** What `pragma wal_checkpoint` answers: frames in the log, and how many are in the database. */
export interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

export interface CheckpointCounts {
  /** Checkpoints run with their syncs off the event loop. */
  checkpoints: number;
  /** Checkpoints that failed: after the first, SQLite checkpoints by itself again. */
  failedCheckpoints: number;
}

/** SQLite's default: its own checkpoint when a COMMIT takes the log past this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/**
 * A checkpoint after this many COMMITs. 16 batches of T1's load are some 1,000 pages, SQLite's own
 * measure; fewer checkpoints (64) measured no faster. COMMITs of large documents (a deploy's PDFs)
 * make the log longer before it is copied than SQLite's count of pages would: 16 of them at most.
 */
export const COMMITS_PER_CHECKPOINT = 16;

export interface CheckpointParts {
  /** A connection of its own, for the read transaction that spans the checkpoint. */
  pin: Database.Database;
  /** Another connection, not in a transaction now: it makes the copy. */
  copier: Database.Database;
  /** Makes everything in the log durable, whoever wrote it. */
  syncLog: () => Promise<void>;
  /** fdatasync of the database file. */
  syncDatabaseFile: LogSync;
  /**
   * Told when the database file could not be synced after a copy (by default the process ends at
   * once: see checkpointNow).
   */
  fileNotDurable?: (error: unknown) => void;
}

/**
 * The file may have lost pages that SQLite now counts as copied: closing the database would let
 * SQLite remove the log that holds them (its last connection's close copies nothing more and
 * deletes the log), and so would the process's normal exit (better-sqlite3 closes every database
 * then). Ending the process at once leaves the log, and the next open mends the file from it, as
 * PostgreSQL stops at a failed fsync.
 */
function endTheProcess(error: unknown): never {
  process.stderr.write(
    `the database file could not be synced after a checkpoint: ending now so that its log is kept (${String(error)})\n`,
  );
  process.abort();
}

/**
 * One checkpoint: SQLite's own steps (sync the log, copy it into the database file, sync that
 * file), with the two syncs in libuv's thread pool. A read transaction on `pin`, begun first and
 * ended last, is what makes the copy without syncs safe, and it holds no lock a writer waits
 * for: a checkpoint never copies past a reader's snapshot, so the sync that began after the pin
 * covers every frame copied; and no writer, of any process, starts the log afresh while a reader
 * uses it (it writes on after the end instead), so the log keeps every copied frame until the
 * database file is durable. The caller holds this process's writes back, so that the copy reaches
 * the end of the log and the next batch may start it afresh.
 */
export async function checkpointNow(parts: CheckpointParts): Promise<CheckpointResult> {
  const { pin, copier } = parts;
  pin.exec('begin');
  // Set while the file holds copied pages that are not durable yet: the log must keep them.
  let keepLog = false;
  try {
    pin.prepare('select count(*) from sqlite_master').pluck().get();
    await parts.syncLog();
    // Its own syncs are the two made here.
    const synchronous = copier.pragma('synchronous', { simple: true }) as number;
    copier.pragma('synchronous = OFF');
    let result: CheckpointResult;
    try {
      // A copy that fails records nothing as copied (SQLite counts the pages only at its end).
      [result] = copier.pragma('wal_checkpoint(PASSIVE)') as [CheckpointResult];
      keepLog = true;
    } finally {
      copier.pragma(`synchronous = ${synchronous}`);
    }
    try {
      await parts.syncDatabaseFile();
    } catch (error) {
      (parts.fileNotDurable ?? endTheProcess)(error);
      throw error;
    }
    keepLog = false;
    return result;
  } finally {
    // After a copy whose file could not be synced, the read transaction stays open: no writer of
    // any process starts the log afresh over pages the file may have lost.
    if (!keepLog) pin.exec('commit');
  }
}

/** When the checkpoints of one group-committing writer run, and what happens when one fails. */
export class WalCheckpoints {
  #commits = 0;
  #running: Promise<void> | undefined;
  #failed = false;
  #closed = false;

  constructor(
    private readonly writer: Database.Database,
    /** One checkpoint with this process's writes held (the driver's writer around checkpointNow). */
    private readonly checkpoint: () => Promise<CheckpointResult>,
    private readonly counts: CheckpointCounts,
    private readonly commitsPerCheckpoint = COMMITS_PER_CHECKPOINT,
  ) {
    writer.pragma('wal_autocheckpoint = 0');
  }

  /** A COMMIT of the writer has returned. */
  committed(): void {
    if (this.#failed || this.#closed || this.#running) return;
    if (++this.#commits < this.commitsPerCheckpoint) return;
    this.#commits = 0;
    this.#running = this.#round().finally(() => (this.#running = undefined));
  }

  /**
   * Waits for the checkpoint under way (it holds the writer: call this before holding it), then
   * gives checkpoints back to SQLite.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#running;
    this.#giveBack();
  }

  async #round(): Promise<void> {
    try {
      await this.checkpoint();
      this.counts.checkpoints += 1;
    } catch {
      this.counts.failedCheckpoints += 1;
      this.#failed = true;
      this.#giveBack();
    }
  }

  #giveBack(): void {
    if (this.writer.open) this.writer.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  }
}
