// Checkpoints of group commit's log, off the event loop (docs/decisions.md, "Checkpoints off the
// event loop"). SQLite's own checkpoint runs inside the COMMIT that takes the log past 1,000
// pages: on the event loop, it copies those pages into the database file and syncs both files,
// some 5 ms every 15 batches under load, about a tenth of a T1's time there (docs/performance.md,
// "Checkpoints off the event loop").
// Here the writer's automatic checkpoints are off, and a thread of its own with a connection of
// its own checkpoints instead (PASSIVE: beside the writer, never blocking it).
//
// A checkpoint beside a writer that keeps committing is never complete, and SQLite starts the log
// afresh only after a complete one: the log would grow without end. So when it has grown past
// `wrapFrames`, writes pause (the batch open then commits, no new one begins) while the thread
// checkpoints what is left, a few hundred pages, and the next batch starts the log afresh. The
// event loop goes on meanwhile; only writers wait, and they join one batch when it ends.
//
// Should the thread fail, SQLite's own checkpoints are turned back on: the log never grows
// without end, it only goes back to costing the event loop. A process checkpoints its own writes
// once more when it closes its database: a CLI command may commit fewer than 16 times, and a
// server that only reads counts no COMMITs of its own.
import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { deferred, type Deferred } from './deferred.js';

/** What `pragma wal_checkpoint(PASSIVE)` answers: frames in the log, and how many are copied. */
export interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

/** Runs one PASSIVE checkpoint of the database; `close` ends what runs them. */
export interface CheckpointRunner {
  checkpoint(): Promise<CheckpointResult>;
  close(): Promise<void>;
}

export interface CheckpointCounts {
  /** Checkpoints run off the event loop. */
  checkpoints: number;
  /**
   * Checkpoints, taken while writes paused, that copied the whole log: after each the next batch
   * starts the log afresh.
   */
  logRestarts: number;
  /** Checkpoints that failed: after the first, SQLite checkpoints by itself again. */
  failedCheckpoints: number;
}

/** SQLite's default: its own checkpoint when a COMMIT takes the log past this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

export interface WalCheckpointOptions {
  /** A checkpoint after this many COMMITs (when none is running). */
  commitsPerCheckpoint: number;
  /** Pause writes to start the log afresh once it holds this many frames (pages). */
  restartFrames: number;
}

/**
 * 16 COMMITs: under load some 1,000 pages (SQLite's own measure), when idle a checkpoint now and
 * then. 4,096 frames: 16 MiB of log at 4 KiB pages; a pause per 16 MiB written (measured: a few
 * ms, about once a second under T1's load).
 */
export const DEFAULT_CHECKPOINT_OPTIONS: WalCheckpointOptions = {
  commitsPerCheckpoint: 16,
  restartFrames: 4096,
};

/** The checkpoints of one group-committing writer. */
export class WalCheckpoints {
  #commits = 0;
  #running: Promise<void> | undefined;
  #failed = false;
  #closed = false;

  constructor(
    private readonly writer: Database.Database,
    private readonly runner: CheckpointRunner,
    /** Runs `work` while no batch is open and none may begin (the driver's writer lock). */
    private readonly withoutWrites: (work: () => Promise<void>) => Promise<void>,
    private readonly counts: CheckpointCounts,
    private readonly options: WalCheckpointOptions = DEFAULT_CHECKPOINT_OPTIONS,
  ) {
    writer.pragma('wal_autocheckpoint = 0');
  }

  /** A COMMIT of the writer has returned. */
  committed(): void {
    if (this.#failed || this.#closed || this.#running) return;
    if (++this.#commits < this.options.commitsPerCheckpoint) return;
    this.#commits = 0;
    this.#running = this.#round().finally(() => (this.#running = undefined));
  }

  /**
   * Waits for the checkpoint under way (which may pause writes: call this before holding the
   * writer), then ends the thread and gives checkpoints back to SQLite.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#running;
    await this.runner.close();
    this.writer.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  }

  async #round(): Promise<void> {
    try {
      const { log } = await this.#checkpoint();
      if (log < this.options.restartFrames || this.#closed) return;
      await this.withoutWrites(async () => {
        const last = await this.#checkpoint();
        // Complete: the next batch starts the log afresh (unless a reader of another process
        // still reads from it; then a later round tries again).
        if (last.busy === 0 && last.checkpointed === last.log) this.counts.logRestarts += 1;
      });
    } catch {
      this.counts.failedCheckpoints += 1;
      this.#failed = true;
      this.writer.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
      await this.runner.close().catch(() => {});
    }
  }

  async #checkpoint(): Promise<CheckpointResult> {
    const result = await this.runner.checkpoint();
    this.counts.checkpoints += 1;
    return result;
  }
}

/**
 * The thread's whole program: plain JavaScript (a TypeScript module would need a loader in the
 * thread when the server runs from its sources), one connection, one checkpoint per message.
 */
const THREAD_PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [{ busy, log, checkpointed }] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true, result: { busy, log, checkpointed } });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message) });
  }
});
`;

type ThreadAnswer = { ok: true; result: CheckpointResult } | { ok: false; message: string };

/**
 * Checkpoints of the database file at `path` in a worker thread, started at the first checkpoint
 * (a server that never writes never starts it). One checkpoint at a time.
 */
export function checkpointThread(path: string): CheckpointRunner {
  let worker: Worker | undefined;
  let exited: Promise<void> | undefined;
  /** Why the thread stopped, if it did: every later checkpoint is refused with it. */
  let stopped: Error | undefined;
  let waiting: Deferred<CheckpointResult> | undefined;
  const fail = (error: Error) => {
    stopped ??= error;
    const current = waiting;
    waiting = undefined;
    current?.reject(error);
  };
  const start = () => {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const started = new Worker(THREAD_PROGRAM, {
      eval: true,
      workerData: { driver, path },
      // A connection and a page cache: the smallest heap V8 takes is plenty.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    // Idle, it does not keep the process alive; while a checkpoint or its close is under way, it
    // does (a CLI that closes its database would otherwise exit before the thread has closed).
    started.unref();
    started.on('message', (answer: ThreadAnswer) => {
      started.unref();
      const current = waiting;
      waiting = undefined;
      if (answer.ok) current?.resolve(answer.result);
      else current?.reject(new Error(`checkpoint of ${path}: ${answer.message}`));
    });
    started.on('error', fail);
    exited = new Promise((done) =>
      started.once('exit', () => {
        fail(new Error(`the checkpoint thread of ${path} stopped`));
        done();
      }),
    );
    return started;
  };
  return {
    checkpoint() {
      if (stopped) return Promise.reject(stopped);
      if (waiting) return Promise.reject(new Error('a checkpoint is running already'));
      worker ??= start();
      waiting = deferred<CheckpointResult>();
      const { promise } = waiting;
      worker.ref();
      worker.postMessage('checkpoint');
      return promise;
    },
    async close() {
      if (!worker) return;
      stopped ??= new Error(`the checkpoint thread of ${path} is closed`);
      worker.ref();
      worker.postMessage('close');
      await exited;
      worker = undefined;
    },
  };
}
