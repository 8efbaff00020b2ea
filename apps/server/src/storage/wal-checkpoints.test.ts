// Group commit's checkpoints, their syncs off the event loop, on a SQLite file.
import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rowsInDatabaseFileAlone, tempDir } from '../../test/helpers.js';
import { GroupCommitSqliteDialect, type GroupCommitCounts } from './sqlite-group-commit.js';
import { checkpointNow, WalCheckpoints } from './wal-checkpoints.js';
import { fileSync, walFileSync, type LogSync } from './wal-sync.js';

interface Schema {
  items: { id: number; body: string };
}

/** 4,000 characters: about a page of the log per row. */
const BODY = 'x'.repeat(4000);

interface Opened {
  db: Kysely<Schema>;
  writer: Database.Database;
  counts: GroupCommitCounts;
}

const wait = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe.runIf(process.env.PAL_TEST_ENGINE !== 'postgres')(
  'checkpoints, their syncs off the event loop',
  () => {
    let dir: ReturnType<typeof tempDir>;
    let path: string;
    const opened: Kysely<Schema>[] = [];

    /**
     * A group-committing database checkpointing every second COMMIT; `syncDatabaseFile` wraps the
     * real fdatasync of the database file (to hold or fail it).
     */
    function open(
      wrapSync: (real: LogSync) => LogSync = (real) => real,
      fileNotDurable?: (error: unknown) => void,
    ): Opened {
      const writer = new Database(path);
      writer.pragma('journal_mode = WAL');
      writer.pragma('synchronous = NORMAL');
      const log = walFileSync(path);
      const file = fileSync(path);
      const dialect = new GroupCommitSqliteDialect({
        writer,
        reader: new Database(path),
        sync: log.sync,
        checkpoints: {
          openPin: () => new Database(path),
          syncDatabaseFile: wrapSync(file.sync),
          commitsPerCheckpoint: 2,
          fileNotDurable,
        },
        onClose: async () => {
          await log.close();
          await file.close();
        },
      });
      const db = new Kysely<Schema>({ dialect });
      opened.push(db);
      return { db, writer, counts: dialect.counts };
    }

    async function close(db: Kysely<Schema>): Promise<void> {
      opened.splice(opened.indexOf(db), 1);
      await db.destroy();
    }

    /** `rounds` rounds of `perRound` concurrent transactions, one row each, ids from `from`. */
    async function write(db: Kysely<Schema>, rounds: number, perRound: number, from = 0) {
      for (let round = 0; round < rounds; round++) {
        await Promise.all(
          Array.from({ length: perRound }, (_, i) =>
            db.transaction().execute((trx) =>
              trx
                .insertInto('items')
                .values({ id: from + round * perRound + i, body: BODY })
                .execute(),
            ),
          ),
        );
      }
    }

    /** What checkpoints have copied into the database file (see rowsInDatabaseFileAlone). */
    const rowsInFileAlone = () => rowsInDatabaseFileAlone(path, 'items');

    const count = async (db: Kysely<Schema>) =>
      Number(
        (
          await db
            .selectFrom('items')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    /** A sync of the database file that waits until `release` is called. */
    function heldSync() {
      let release!: () => void;
      const held = new Promise<void>((done) => (release = done));
      let waiting = 0;
      const wrap =
        (real: LogSync): LogSync =>
        async () => {
          waiting += 1;
          await held;
          await real();
        };
      return { wrap, release, waiting: () => waiting };
    }

    beforeEach(() => {
      dir = tempDir('pal-checkpoints-');
      path = join(dir.path, 'c.sqlite');
      const setup = new Database(path);
      setup.pragma('journal_mode = WAL');
      setup.exec('create table items (id integer primary key, body text not null)');
      setup.close();
    });
    afterEach(async () => {
      for (const db of opened.splice(0)) await db.destroy();
      dir.remove();
    });

    it('copies the log into the database as writes go, and the log starts afresh', async () => {
      const { db, writer, counts } = open();
      expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      for (let part = 0; part < 20; part++) await write(db, 10, 20, part * 200);
      // 4,000 rows of a page each, some 16 MB, through a log written again from its start after
      // each checkpoint (every second COMMIT: 20 rows).
      expect(counts.checkpoints).toBeGreaterThan(50);
      expect(counts.failedCheckpoints).toBe(0);
      expect(statSync(`${path}-wal`).size).toBeLessThan(1_000_000);
      // With SQLite's own checkpoints off, these are what put rows in the database file while the
      // database is open.
      expect(rowsInFileAlone()).toBeGreaterThan(3900);
      await close(db);
      const alone = new Database(path, { readonly: true });
      expect(alone.prepare('select count(*) from items').pluck().get()).toBe(4000);
      expect(alone.pragma('integrity_check', { simple: true })).toBe('ok');
      alone.close();
    });

    it('holds this process’s writers until the database file is synced, not other processes’', async () => {
      const sync = heldSync();
      const { db, counts } = open(sync.wrap);
      await write(db, 2, 1);
      // The second COMMIT began a checkpoint: it has copied the log and waits for the sync.
      while (sync.waiting() === 0) await wait(5);
      let answered = false;
      const waiting = write(db, 1, 1, 100).then(() => (answered = true));
      await wait(100);
      expect(answered).toBe(false);
      // Reads go on meanwhile, and see every write answered before.
      expect(await count(db)).toBe(2);
      // Another process writes meanwhile: it waits for nothing, and its frames go after those the
      // checkpoint copied (the log is not started afresh over them before the file is durable).
      const other = new Database(path);
      other.pragma('busy_timeout = 0');
      const before = (other.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;
      expect(before).toBeGreaterThan(0);
      other.prepare('insert into items values (?, ?)').run(200, BODY);
      const after = (other.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;
      expect(after).toBeGreaterThan(before);
      other.close();
      sync.release();
      await waiting;
      expect(counts.checkpoints).toBe(1);
      expect(await count(db)).toBe(4);
    });

    it('gives checkpoints back to SQLite when one fails, and keeps writing', async () => {
      const writer = new Database(path);
      writer.pragma('journal_mode = WAL');
      const counts = { checkpoints: 0, failedCheckpoints: 0 };
      let tries = 0;
      const checkpoints = new WalCheckpoints(
        writer,
        () => {
          tries += 1;
          return Promise.reject(new Error('disk I/O error'));
        },
        counts,
        2,
      );
      expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      for (let i = 0; i < 6; i++) {
        writer.prepare('insert into items values (?, ?)').run(i, BODY);
        checkpoints.committed();
        await wait(1);
      }
      expect(tries).toBe(1);
      expect(counts).toEqual({ checkpoints: 0, failedCheckpoints: 1 });
      expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      // SQLite's own checkpoints keep the log short again (1,000 pages): 10 MB more of rows.
      for (let i = 6; i < 2600; i++) writer.prepare('insert into items values (?, ?)').run(i, BODY);
      expect(statSync(`${path}-wal`).size).toBeLessThan(5_000_000);
      await checkpoints.close();
      writer.close();
    });

    it('keeps the log whole when the database file cannot be synced after the copy', async () => {
      const told: unknown[] = [];
      const { db, counts } = open(
        () => () => Promise.reject(new Error('EIO: fdatasync')),
        (error) => told.push(error),
      );
      await write(db, 2, 1);
      while (counts.failedCheckpoints === 0) await wait(5);
      // In the service the process ends here (the default of fileNotDurable), leaving the log.
      expect(told).toHaveLength(1);
      // The copy reached the file, but the file is not durable: no writer, of this process or
      // another, may start the log afresh over those pages meanwhile.
      const other = new Database(path);
      const before = (other.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;
      expect(before).toBeGreaterThan(0);
      other.prepare('insert into items values (?, ?)').run(100, BODY);
      expect(
        (other.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log,
      ).toBeGreaterThan(before);
      other.close();
    });

    it('syncs the log before the copy and the file after it, beside another process’s open write', async () => {
      // A committed row only in the log (its writer stays open, so no close copies it), and
      // another process's write not committed yet.
      const first = new Database(path);
      first.pragma('wal_autocheckpoint = 0');
      first.prepare('insert into items values (?, ?)').run(1, BODY);
      const pin = new Database(path);
      const copier = new Database(path);
      const synchronous = copier.pragma('synchronous', { simple: true });
      const other = new Database(path);
      other.exec('begin immediate');
      other.prepare('insert into items values (?, ?)').run(2, BODY);
      // What the database file alone holds when each sync is made.
      const seen: string[] = [];
      const result = await checkpointNow({
        pin,
        copier,
        syncLog: async () => void seen.push(`log: ${rowsInFileAlone()} rows in the file`),
        syncDatabaseFile: async () => void seen.push(`file: ${rowsInFileAlone()} rows in the file`),
      });
      expect(seen).toEqual(['log: 0 rows in the file', 'file: 1 rows in the file']);
      expect(result).toMatchObject({ busy: 0 });
      expect(result.checkpointed).toBe(result.log);
      // The read transaction has ended, and the copier's own syncs are back as they were.
      expect(pin.inTransaction).toBe(false);
      expect(copier.pragma('synchronous', { simple: true })).toBe(synchronous);
      other.exec('commit');
      for (const c of [first, pin, copier, other]) c.close();
    });

    it('closes once the checkpoint under way has ended', async () => {
      const sync = heldSync();
      const { db, counts } = open(sync.wrap);
      await write(db, 2, 1);
      while (sync.waiting() === 0) await wait(5);
      const closed = close(db);
      await wait(50);
      sync.release();
      await closed;
      expect(counts.checkpoints).toBe(1);
      const alone = new Database(path, { readonly: true });
      expect(alone.prepare('select count(*) from items').pluck().get()).toBe(2);
      alone.close();
    });

    it('a process that writes less than a checkpoint needs still checkpoints its writes at close', async () => {
      // A server that only reads keeps the file open; a CLI command commits once and ends.
      const server = open();
      const cli = open();
      await write(cli.db, 1, 1);
      expect(cli.counts).toMatchObject({ commits: 1, checkpoints: 0 });
      await close(cli.db);
      expect(rowsInFileAlone()).toBe(1);
      expect(await count(server.db)).toBe(1);
    });
  },
);
