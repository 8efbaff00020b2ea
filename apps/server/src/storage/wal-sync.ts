// Makes group commit's COMMITs durable off the event loop (docs/decisions.md, "The fsync off the
// event loop"). The writing connection runs with synchronous=NORMAL, under which a COMMIT in WAL
// mode writes its frames to the log file without syncing it; SQLite still syncs its header when
// the log is reused, and each checkpoint syncs the log first (here too: syncNow, used by
// wal-checkpoints.ts). What NORMAL leaves out, the sync at each COMMIT, is done here: fdatasync
// of the log file in libuv's thread pool, while the event loop goes on. A COMMIT counts as
// durable, and its callers are answered, only once a sync that began after it returned has
// finished; commits written during one sync share the next.
import { close, fdatasync, openSync } from 'node:fs';
import { promisify } from 'node:util';
import { deferred, type Deferred } from './deferred.js';

const syncFile = promisify(fdatasync);
const closeFile = promisify(close);

/** Makes everything written to the log so far durable. */
export type LogSync = () => Promise<void>;

interface Round {
  /** The last commit it covers. */
  readonly upTo: number;
  readonly done: Promise<void>;
}

export class WalSync {
  /** Commits written to the log (numbered from 1). */
  #written = 0;
  /** The last commit known durable. */
  #durable = 0;
  #running: Round | undefined;
  /** Commits written while a round runs wait for the one after it. */
  #next: Deferred | undefined;
  /**
   * The first sync that failed. From then on no COMMIT counts as durable: the kernel may have
   * dropped the log's unsynced pages, and SQLite's recovery stops at the first missing frame, so
   * a later COMMIT, synced or not, may be lost with it (PostgreSQL stops at a failed fsync too).
   */
  #failed: unknown;
  constructor(
    private readonly sync: LogSync,
    /** Told of each sync as it begins (the counts of the bench and the tests). */
    private readonly onSync: () => void = () => {},
  ) {}

  /** Throws when a sync has failed: nothing may be written any more (see #failed). */
  throwIfFailed(): void {
    if (this.#failed !== undefined) throw this.#failedError();
  }

  /**
   * Another process committed to the same log: a read may see its COMMIT before that process's
   * sync, so reads wait for a sync of ours (the same file) as for a COMMIT of ours.
   */
  foreignCommit(): void {
    this.#written += 1;
  }

  /**
   * A sync of the log begun now, beside the COMMITs' own: everything in the log by then, whoever
   * wrote it, is durable when it resolves (a checkpoint copies only what is). Reads do not wait
   * for it. Its failure is a failed sync like any other (see #failed).
   */
  async syncNow(): Promise<void> {
    this.throwIfFailed();
    try {
      await this.sync();
    } catch (error) {
      this.#failed ??= error;
      throw error;
    }
  }

  /** A COMMIT has returned: resolves once it is durable; rejects when its sync failed. */
  committed(): Promise<void> {
    this.#written += 1;
    return this.#covering(this.#written);
  }

  /**
   * Undefined when every COMMIT written so far is durable; else resolves once they are. A read
   * that may have seen them waits for it, so nobody is told of a write that may yet be lost.
   */
  pending(): Promise<void> | undefined {
    return this.#durable === this.#written ? undefined : this.#covering(this.#written);
  }

  #covering(commit: number): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failedError());
    if (this.#running && this.#running.upTo >= commit) return this.#running.done;
    if (this.#running) return (this.#next ??= deferred()).promise;
    return this.#start().done;
  }

  #start(): Round {
    const upTo = this.#written;
    this.onSync();
    // A sync that throws at once (the log cannot be opened) fails its round like one that rejects.
    const done = new Promise<void>((ok) => ok(this.sync())).then(
      () => {
        this.#durable = Math.max(this.#durable, upTo);
      },
      (error: unknown) => {
        this.#failed ??= error;
        throw error;
      },
    );
    const round: Round = { upTo, done };
    this.#running = round;
    const after = () => {
      this.#running = undefined;
      const next = this.#next;
      this.#next = undefined;
      if (!next) return;
      if (this.#failed !== undefined) next.reject(this.#failedError());
      else this.#start().done.then(next.resolve, next.reject);
    };
    done.then(after, after);
    return round;
  }

  #failedError(): Error {
    return new Error(
      'a sync of the database log failed earlier: no write can be made durable until the service restarts',
      { cause: this.#failed },
    );
  }
}

/**
 * fdatasync of a database's log file (`<path>-wal`), opened at the first sync: by then a COMMIT
 * has created it. The writing connection stays open while the service runs, so SQLite never
 * deletes the file under this descriptor (it removes the log only when its last connection closes).
 */
export function walFileSync(databasePath: string): { sync: LogSync; close(): Promise<void> } {
  return fileSync(`${databasePath}-wal`);
}

/** fdatasync of a file in libuv's thread pool, opened at its first sync and kept open. */
export function fileSync(path: string): { sync: LogSync; close(): Promise<void> } {
  let fd: number | undefined;
  return {
    sync: async () => syncFile((fd ??= openSync(path, 'r'))),
    close: async () => {
      if (fd !== undefined) await closeFile(fd);
      fd = undefined;
    },
  };
}
