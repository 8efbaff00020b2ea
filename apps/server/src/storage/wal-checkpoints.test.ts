// Group commit's checkpoints in a thread of their own, on a SQLite file.
import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { GroupCommitSqliteDialect, type GroupCommitCounts } from './sqlite-group-commit.js';
import { checkpointThread, type CheckpointRunner } from './wal-checkpoints.js';
import { walFileSync } from './wal-sync.js';

interface Schema {
  items: { id: number; body: string };
}

/** 4,000 characters: about a page of the log per row. */
const BODY = 'x'.repeat(4000);

describe.runIf(process.env.PAL_TEST_ENGINE !== 'postgres')('checkpoints off the event loop', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  let writer: Database.Database;
  let db: Kysely<Schema> | undefined;
  let counts: GroupCommitCounts;

  /** A group-committing database with `runner` for its checkpoints, checkpointing often. */
  function open(runner: CheckpointRunner): Kysely<Schema> {
    writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.pragma('synchronous = NORMAL');
    const reader = new Database(path);
    const log = walFileSync(path);
    const dialect = new GroupCommitSqliteDialect({
      writer,
      reader,
      sync: log.sync,
      checkpoints: runner,
      checkpointOptions: { commitsPerCheckpoint: 2, restartFrames: 64 },
      onClose: log.close,
    });
    counts = dialect.counts;
    db = new Kysely<Schema>({ dialect });
    return db;
  }

  /** `rounds` rounds of `perRound` concurrent transactions, one row each. */
  async function write(target: Kysely<Schema>, rounds: number, perRound: number, from = 0) {
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        Array.from({ length: perRound }, (_, i) =>
          target.transaction().execute((trx) =>
            trx
              .insertInto('items')
              .values({ id: from + round * perRound + i, body: BODY })
              .execute(),
          ),
        ),
      );
    }
  }

  beforeEach(async () => {
    dir = tempDir('pal-checkpoints-');
    path = join(dir.path, 'c.sqlite');
    const setup = new Database(path);
    setup.pragma('journal_mode = WAL');
    setup.exec('create table items (id integer primary key, body text not null)');
    setup.close();
  });
  afterEach(async () => {
    await db?.destroy();
    db = undefined;
    dir.remove();
  });

  it('takes checkpoints off the COMMITs and starts the log afresh, losing nothing', async () => {
    const target = open(checkpointThread(path));
    expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const logSizes: number[] = [];
    for (let part = 0; part < 10; part++) {
      await write(target, 10, 20, part * 200);
      logSizes.push(statSync(`${path}-wal`).size);
    }
    // 2,000 rows of a page each, some 8 MB: the log grew while the thread started, then no more
    // (SQLite does not shorten the file; it writes it again from its start).
    expect(counts.checkpoints).toBeGreaterThan(10);
    expect(counts.logRestarts).toBeGreaterThan(3);
    expect(Math.max(...logSizes.slice(5))).toBeLessThanOrEqual(Math.max(...logSizes.slice(0, 5)));
    expect(Math.max(...logSizes)).toBeLessThan(4_000_000);
    expect(counts.failedCheckpoints).toBe(0);
    // What the checkpoints copied is the database: a connection that reads the file alone (the
    // log removed at close) has every row.
    await db!.destroy();
    db = undefined;
    expect(() => statSync(`${path}-wal`)).toThrow();
    const alone = new Database(path, { readonly: true });
    expect(alone.prepare('select count(*) from items').pluck().get()).toBe(2000);
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
    const target = open(runner);
    let written = 0;
    while (holds === 0) {
      await write(target, 1, 5, written);
      written += 5;
    }
    let answered = false;
    const waiting = write(target, 1, 1, 10_000).then(() => (answered = true));
    await new Promise((done) => setTimeout(done, 100));
    expect(answered).toBe(false);
    // Reads go on meanwhile, and see every write answered before.
    const { n } = await target
      .selectFrom('items')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(n).toBe(written);
    release();
    await waiting;
    expect(holds).toBe(1);
    expect(counts.logRestarts).toBe(1);
    expect(
      await target.selectFrom('items').select('id').where('id', '=', 10_000).execute(),
    ).toHaveLength(1);
  });

  it('gives checkpoints back to SQLite when its thread fails, and keeps writing', async () => {
    const target = open({
      checkpoint: () => Promise.reject(new Error('disk I/O error')),
      close: async () => {},
    });
    await write(target, 20, 5);
    expect(counts.failedCheckpoints).toBe(1);
    expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    // SQLite's own checkpoints keep the log short again (1,000 pages): 10 MB more of rows.
    await write(target, 500, 5, 100);
    expect(statSync(`${path}-wal`).size).toBeLessThan(5_000_000);
    const { n } = await target
      .selectFrom('items')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(n).toBe(2600);
  });

  it('closes once the checkpoint under way has ended', async () => {
    const thread = checkpointThread(path);
    let ended = 0;
    const target = open({
      async checkpoint() {
        await new Promise((done) => setTimeout(done, 200));
        const result = await thread.checkpoint();
        ended += 1;
        return result;
      },
      close: () => thread.close(),
    });
    await write(target, 3, 5);
    expect(counts.checkpoints).toBe(0); // the first is under way
    await target.destroy();
    db = undefined;
    expect(ended).toBe(1);
    const alone = new Database(path, { readonly: true });
    expect(alone.prepare('select count(*) from items').pluck().get()).toBe(15);
    alone.close();
  });
});
