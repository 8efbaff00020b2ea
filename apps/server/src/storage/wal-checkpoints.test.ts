// Group commit's checkpoints in a thread of their own, on a SQLite file.
import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { copyFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { GroupCommitSqliteDialect, type GroupCommitCounts } from './sqlite-group-commit.js';
import {
  checkpointThread,
  type CheckpointResult,
  type CheckpointRunner,
} from './wal-checkpoints.js';
import { walFileSync } from './wal-sync.js';

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

describe.runIf(process.env.PAL_TEST_ENGINE !== 'postgres')('checkpoints off the event loop', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  const opened: Kysely<Schema>[] = [];

  /** A group-committing database with `runner` for its checkpoints, checkpointing often. */
  function open(runner: CheckpointRunner): Opened {
    const writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.pragma('synchronous = NORMAL');
    const log = walFileSync(path);
    const dialect = new GroupCommitSqliteDialect({
      writer,
      reader: new Database(path),
      sync: log.sync,
      checkpoints: runner,
      checkpointOptions: { commitsPerCheckpoint: 2, restartFrames: 64 },
      onClose: log.close,
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

  /**
   * The rows in the database file alone, without its log: what checkpoints have copied there.
   * Read from a copy, so that the log is neither read nor recovered.
   */
  function rowsInFileAlone(): number {
    const copy = join(dir.path, 'alone.sqlite');
    copyFileSync(path, copy);
    const file = new Database(copy, { readonly: true });
    try {
      return file.prepare('select count(*) from items').pluck().get() as number;
    } finally {
      file.close();
    }
  }

  const count = async (db: Kysely<Schema>) =>
    Number(
      (
        await db
          .selectFrom('items')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

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

  it('copies the log into the database beside the writer, and starts the log afresh', async () => {
    const { db, writer, counts } = open(checkpointThread(path));
    expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    let largestLog = 0;
    for (let part = 0; part < 20; part++) {
      await write(db, 10, 20, part * 200);
      largestLog = Math.max(largestLog, statSync(`${path}-wal`).size);
    }
    // 4,000 rows of a page each, some 16 MB, through a log that grew while the thread started
    // and was then written again from its start (SQLite does not shorten the file).
    expect(counts.logRestarts).toBeGreaterThan(3);
    expect(largestLog).toBeLessThan(8_000_000);
    expect(counts.failedCheckpoints).toBe(0);
    // With SQLite's own checkpoints off, the thread's are what put rows in the database file
    // while the database is open (the last round given time to end).
    await wait(300);
    expect(rowsInFileAlone()).toBeGreaterThan(3000);
    await close(db);
    const alone = new Database(path, { readonly: true });
    expect(alone.prepare('select count(*) from items').pluck().get()).toBe(4000);
    expect(alone.pragma('integrity_check', { simple: true })).toBe('ok');
    alone.close();
  });

  it('holds writers back while the log starts afresh, and answers them after', async () => {
    const thread = checkpointThread(path);
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    let holds = 0;
    let finalNext = false;
    // The checkpoint after one that found the log long is the one taken without writes: held.
    const runner: CheckpointRunner = {
      async checkpoint() {
        const final = finalNext;
        finalNext = false;
        if (final) {
          holds += 1;
          await held;
        }
        const result = await thread.checkpoint();
        if (!final && result.log >= 64) finalNext = true;
        return result;
      },
      close: () => thread.close(),
    };
    const { db, counts } = open(runner);
    let written = 0;
    while (holds === 0) {
      await write(db, 1, 5, written);
      written += 5;
    }
    let answered = false;
    const waiting = write(db, 1, 1, 10_000).then(() => (answered = true));
    await wait(100);
    expect(answered).toBe(false);
    // Reads go on meanwhile, and see every write answered before.
    expect(await count(db)).toBe(written);
    release();
    await waiting;
    expect(holds).toBe(1);
    expect(counts.logRestarts).toBe(1);
    expect(
      await db.selectFrom('items').select('id').where('id', '=', 10_000).execute(),
    ).toHaveLength(1);
  });

  it('gives checkpoints back to SQLite when its thread fails, and keeps writing', async () => {
    const { db, writer, counts } = open({
      checkpoint: () => Promise.reject(new Error('disk I/O error')),
      close: async () => {},
    });
    await write(db, 20, 5);
    expect(counts.failedCheckpoints).toBe(1);
    expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    // SQLite's own checkpoints keep the log short again (1,000 pages): 10 MB more of rows.
    await write(db, 500, 5, 100);
    expect(statSync(`${path}-wal`).size).toBeLessThan(5_000_000);
    expect(await count(db)).toBe(2600);
  });

  it('closes once the checkpoint under way has ended', async () => {
    const thread = checkpointThread(path);
    let ended = 0;
    const { db, counts } = open({
      async checkpoint() {
        await wait(200);
        const result = await thread.checkpoint();
        ended += 1;
        return result;
      },
      close: () => thread.close(),
    });
    await write(db, 3, 5);
    expect(counts.checkpoints).toBe(0); // the first is under way
    await close(db);
    expect(ended).toBe(1);
    const alone = new Database(path, { readonly: true });
    expect(alone.prepare('select count(*) from items').pluck().get()).toBe(15);
    alone.close();
  });

  it('closes when a checkpoint under way finds the log long and would pause writes', async () => {
    // The first checkpoint answers while the close waits for the last batch: before, the round
    // then waited for the writer that the close held, and the close for the round.
    let answer!: (result: CheckpointResult) => void;
    const { db } = open({
      checkpoint: () => new Promise((done) => (answer = done)),
      close: async () => {},
    });
    await write(db, 2, 1);
    const closed = close(db);
    answer({ busy: 0, log: 1_000_000, checkpointed: 0 });
    const outcome = await Promise.race([
      closed.then(() => 'closed'),
      wait(3000).then(() => 'hung'),
    ]);
    expect(outcome).toBe('closed');
  });

  it('a process that writes less than a checkpoint needs still checkpoints its writes at close', async () => {
    // A server that only reads keeps the file open; a CLI command commits once and ends.
    const server = open(checkpointThread(path));
    const cli = open(checkpointThread(path));
    await write(cli.db, 1, 1);
    expect(cli.counts).toMatchObject({ commits: 1, checkpoints: 0 });
    await close(cli.db);
    expect(rowsInFileAlone()).toBe(1);
    expect(await count(server.db)).toBe(1);
  });
});
