// One server per SQLite file. Two `pal serve` on one DATA_DIR would both start and both answer,
// each with its own rate counts and caches, the second waiting for the first's write lock with
// its event loop stopped (docs/configuration.md, "Several server processes"). A server therefore
// holds an exclusive lock on a file beside the database for as long as it runs: SQLite's own
// file lock, which the operating system releases when the process ends however it ends (a kill -9
// leaves no stale lock to clean up, unlike a pid file). CLI commands take no such lock: they may
// run beside the server, as deployment.md says.
import Database from 'better-sqlite3';
import { dirname } from 'node:path';
import { makeFolder } from '../folders.js';
import { DatabaseError } from './database.js';

/** The lock held by a running server; released by `release()` or by the process's end. */
export interface SqliteServerLock {
  release(): void;
}

/**
 * Takes the server lock of the SQLite file at `databasePath`; throws DatabaseError when held. An
 * in-memory database is the process's own: nothing to lock.
 */
export function lockSqliteServer(databasePath: string): SqliteServerLock {
  if (databasePath === ':memory:') return { release: () => undefined };
  // Before the database is opened: its folder may not be made yet (a fresh DATA_DIR with
  // PAL_SECRET_KEY set, or a sqlite: path elsewhere).
  makeFolder(dirname(databasePath));
  const lockPath = `${databasePath}.server-lock`;
  const lock = new Database(lockPath, { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    // In rollback-journal mode BEGIN EXCLUSIVE takes the file's exclusive lock at once, and the
    // open transaction keeps it.
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY')
      throw new DatabaseError(
        `another server is already serving the database ${databasePath}: stop it first (one server process per SQLite file; several processes or machines need PostgreSQL, docs/deployment.md)`,
      );
    throw error;
  }
  return {
    release: () => {
      if (lock.open) lock.close();
    },
  };
}
