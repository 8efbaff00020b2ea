// Group commit on a SQLite file, seen from a second connection that only sees what is committed.
import Database from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { groupCommitCounts, openSqlite, sqliteDialect } from './sqlite.js';
import { GroupCommitSqliteDialect } from './sqlite-group-commit.js';

interface Schema {
  items: { id: string };
  /** A table of the name read caches hold (storage/cached-tables.ts). */
  pals: { id: string };
  /** References items; its check waits for the COMMIT. */
  notes: { item_id: string };
}

describe.runIf(process.env.PAL_TEST_ENGINE !== 'postgres')('SQLite group commit', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Kysely<Schema>;
  let observer: Database.Database;
  const committedIds = () =>
    (observer.prepare('select id from items order by id').all() as { id: string }[]).map(
      (r) => r.id,
    );

  beforeEach(async () => {
    dir = tempDir('pal-group-commit-');
    const path = join(dir.path, 'g.sqlite');
    db = openSqlite(path) as unknown as Kysely<Schema>;
    await sql`create table items (id text primary key)`.execute(db);
    await sql`create table pals (id text primary key)`.execute(db);
    await sql`create table notes (item_id text references items (id) deferrable initially deferred)`.execute(
      db,
    );
    observer = new Database(path, { readonly: true });
  });
  afterEach(async () => {
    observer.close();
    await db.destroy();
    dir.remove();
  });

  const insert = (id: string) =>
    db.transaction().execute((trx) => trx.insertInto('items').values({ id }).execute());

  it('commits concurrent transactions together, each resolved only once its commit is durable', async () => {
    const counts = groupCommitCounts(db as never)!;
    const before = { ...counts };
    const ids = Array.from({ length: 50 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
    const seenAtResolve = await Promise.all(
      ids.map(async (id) => {
        await insert(id);
        // Another connection sees the row the moment the transaction resolves.
        return committedIds().includes(id);
      }),
    );
    expect(seenAtResolve.every(Boolean)).toBe(true);
    expect(committedIds()).toEqual(ids);
    expect(counts.transactions - before.transactions).toBe(50);
    // Fewer COMMITs (fsyncs) than transactions.
    expect(counts.commits - before.commits).toBeLessThan(10);
  });

  it('rolls back only the transaction that failed; its neighbours in the batch commit', async () => {
    const results = await Promise.allSettled([
      insert('a'),
      db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 'doomed' }).execute();
        throw new Error('the work failed');
      }),
      insert('a'), // a unique violation: only this one fails
      insert('b'),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect(committedIds()).toEqual(['a', 'b']);
  });

  it('fails every transaction of a batch whose COMMIT fails, and keeps none of their writes', async () => {
    const counts = groupCommitCounts(db as never)!;
    const results = await Promise.allSettled([
      insert('x1'),
      // A note of an item that does not exist: the deferred foreign key fails the batch's COMMIT.
      db
        .transaction()
        .execute((trx) => trx.insertInto('notes').values({ item_id: 'missing' }).execute()),
      insert('x2'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(counts.failedCommits).toBe(1);
    expect(committedIds()).toEqual([]);
    expect(observer.prepare('select count(*) from notes').pluck().get()).toBe(0);
    // The next batch is a fresh one.
    await insert('y');
    expect(committedIds()).toEqual(['y']);
  });

  it('fails the whole batch when SQLite rolls it back by itself, and goes on with the next', async () => {
    await sql`create trigger boom before insert on items when new.id = 'boom' begin select raise(rollback, 'boom'); end`.execute(
      db,
    );
    const results = await Promise.allSettled([insert('a'), insert('boom')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/rolled back the batch/);
    expect(committedIds()).toEqual([]);
    // Nothing hangs, and the next batch and a write outside a transaction commit.
    await insert('c');
    await db.insertInto('items').values({ id: 'd' }).execute();
    expect(committedIds()).toEqual(['c', 'd']);
  });

  it('reads outside a transaction see committed data only, without waiting for the writer', async () => {
    let finish!: () => void;
    const gate = new Promise<void>((done) => (finish = done));
    const writing = db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 'w' }).execute();
      await gate; // the transaction holds the writer, inside its savepoint
    });
    await new Promise((done) => setTimeout(done, 10));
    expect(await db.selectFrom('items').select('id').execute()).toEqual([]);
    finish();
    await writing;
    expect(await db.selectFrom('items').select('id').execute()).toEqual([{ id: 'w' }]);
  });

  it('moves the change stamp when a batch commits, not only when its statements run', async () => {
    const stamp = () => sqliteDialect.changeStamp(db as never);
    let finish!: () => void;
    const gate = new Promise<void>((done) => (finish = done));
    const writing = db.transaction().execute(async (trx) => {
      await trx.insertInto('pals').values({ id: 's' }).execute();
      await gate;
    });
    await new Promise((done) => setTimeout(done, 5));
    // A reader caching now sees no row: what it cached must not outlive the COMMIT.
    const beforeCommit = stamp();
    finish();
    await writing;
    expect(stamp()).not.toBe(beforeCommit);
  });

  it('leaves the change stamp where it is for writes to tables no cache holds', async () => {
    const stamp = () => sqliteDialect.changeStamp(db as never);
    const before = stamp();
    await insert('not-cached');
    await db.updateTable('items').set({ id: 'still-not' }).where('id', '=', 'not-cached').execute();
    expect(stamp()).toBe(before);
    await db.transaction().execute((trx) => trx.insertInto('pals').values({ id: 'p' }).execute());
    const afterPal = stamp();
    expect(afterPal).not.toBe(before);
    // A write with RETURNING (better-sqlite3 runs it as a read), in a transaction and alone.
    const beforeReturning = stamp();
    await db
      .transaction()
      .execute((trx) =>
        trx.updateTable('pals').set({ id: 'q' }).where('id', '=', 'p').returning('id').execute(),
      );
    const afterReturning = stamp();
    expect(afterReturning).not.toBe(beforeReturning);
    await db.deleteFrom('pals').where('id', '=', 'q').returning('id').execute();
    expect(stamp()).not.toBe(afterReturning);
    const afterPal2 = stamp();
    // A statement whose target it cannot name counts too.
    await sql`with n(id) as (select 'w') insert into items select id from n`.execute(db);
    expect(stamp()).not.toBe(afterPal2);
    expect(afterPal2).not.toBe(afterPal);
  });

  it("keeps the shared stamp (other processes' commits) still for this node's own commits", async () => {
    const shared = () => sqliteDialect.sharedChangeStamp(db as never);
    const before = shared();
    await insert('own');
    await new Promise((done) => setTimeout(done, 5));
    expect(shared()).toBe(before);
    const other = new Database(join(dir.path, 'g.sqlite'));
    other.prepare("insert into items (id) values ('theirs')").run();
    other.close();
    await new Promise((done) => setTimeout(done, 5));
    expect(shared()).not.toBe(before);
  });

  it('answers a write outside a transaction once it is durable', async () => {
    const counts = groupCommitCounts(db as never)!;
    const before = counts.commits;
    const [, alone] = await Promise.all([
      insert('t'),
      db
        .insertInto('items')
        .values({ id: 'u' })
        .execute()
        .then(() => committedIds()),
    ]);
    expect(alone).toEqual(['t', 'u']);
    expect(counts.commits - before).toBe(1);
  });

  it('runs a statement that SQLite allows only outside a transaction (VACUUM) when alone', async () => {
    await insert('v');
    await sql`vacuum`.execute(db);
    expect(committedIds()).toEqual(['v']);
  });

  it('is off with groupCommit false: one COMMIT per transaction, as Kysely does', async () => {
    const path = join(dir.path, 'plain.sqlite');
    const plain = openSqlite(path, false);
    try {
      expect(groupCommitCounts(plain)).toBeUndefined();
    } finally {
      await plain.destroy();
    }
  });
});

describe.runIf(process.env.PAL_TEST_ENGINE !== 'postgres')(
  "SQLite group commit: answers wait for the log's sync, which runs off the event loop",
  () => {
    let dir: ReturnType<typeof tempDir>;
    let db: Kysely<Schema>;
    let observer: Database.Database;
    let dialect: GroupCommitSqliteDialect;
    /** The syncs begun, each finished or failed when the test says so. */
    let rounds: { finish(): void; fail(error: Error): void }[];

    beforeEach(async () => {
      dir = tempDir('pal-group-commit-sync-');
      const path = join(dir.path, 'g.sqlite');
      const open = () => {
        const database = new Database(path);
        database.pragma('journal_mode = WAL');
        database.pragma('synchronous = NORMAL');
        return database;
      };
      rounds = [];
      dialect = new GroupCommitSqliteDialect({
        writer: open(),
        reader: open(),
        sync: () => new Promise<void>((finish, fail) => rounds.push({ finish, fail })),
      });
      db = new Kysely<Schema>({ dialect });
      const created = sql`create table items (id text primary key)`.execute(db);
      await waitForRounds(1);
      rounds[0]!.finish();
      await created;
      observer = new Database(path, { readonly: true });
    });
    afterEach(async () => {
      observer.close();
      for (const round of rounds) round.finish();
      await db.destroy();
      dir.remove();
    });

    async function waitForRounds(n: number) {
      while (rounds.length < n) await new Promise((done) => setImmediate(done));
    }
    const committed = (id: string) =>
      observer.prepare('select count(*) from items where id = ?').pluck().get(id) === 1;
    async function state(promise: Promise<unknown>) {
      let result = 'waiting';
      promise.then(
        () => (result = 'answered'),
        () => (result = 'failed'),
      );
      await new Promise((done) => setTimeout(done, 20));
      return result;
    }

    it('answers a transaction only once the sync after its COMMIT has finished', async () => {
      const inserting = db
        .transaction()
        .execute((trx) => trx.insertInto('items').values({ id: 'a' }).execute());
      await waitForRounds(2);
      // COMMITted (another connection sees it) but not yet synced: no answer yet.
      expect(committed('a')).toBe(true);
      expect(await state(inserting)).toBe('waiting');
      rounds[1]!.finish();
      expect(await state(inserting)).toBe('answered');
      expect(dialect.counts.syncs).toBe(2);
    });

    it('answers a write outside a transaction, committed alone, once it is synced', async () => {
      const writing = db.insertInto('items').values({ id: 'alone' }).execute();
      await waitForRounds(2);
      expect(committed('alone')).toBe(true);
      expect(await state(writing)).toBe('waiting');
      rounds[1]!.finish();
      expect(await state(writing)).toBe('answered');
    });

    it('holds a read that saw an unsynced COMMIT until the sync has finished', async () => {
      const inserting = db
        .transaction()
        .execute((trx) => trx.insertInto('items').values({ id: 'r' }).execute());
      await waitForRounds(2);
      const reading = db.selectFrom('items').select('id').execute();
      expect(await state(reading)).toBe('waiting');
      rounds[1]!.finish();
      expect(await reading).toEqual([{ id: 'r' }]);
      await inserting;
      // With nothing left to sync, a read is answered at once.
      expect(await state(db.selectFrom('items').select('id').execute())).toBe('answered');
    });

    it('answers a transaction that rolled back after reading an unsynced COMMIT only once it is synced', async () => {
      const inserting = db
        .transaction()
        .execute((trx) => trx.insertInto('items').values({ id: 'a' }).execute());
      await waitForRounds(2);
      let seen: unknown;
      const refusing = db.transaction().execute(async (trx) => {
        seen = await trx.selectFrom('items').select('id').execute();
        throw new Error('answered from what it read');
      });
      expect(await state(refusing)).toBe('waiting');
      expect(seen).toEqual([{ id: 'a' }]);
      rounds[1]!.finish();
      // Its own batch (empty: it rolled back) commits and syncs after A's.
      await waitForRounds(3);
      rounds[2]!.finish();
      await expect(refusing).rejects.toThrow('answered from what it read');
      await inserting;
    });

    it("holds a read that saw another process's COMMIT until a sync of the log", async () => {
      const other = new Database(join(dir.path, 'g.sqlite'));
      other.pragma('synchronous = NORMAL');
      other.prepare("insert into items (id) values ('theirs')").run();
      other.close();
      const reading = db.selectFrom('items').select('id').execute();
      expect(await state(reading)).toBe('waiting');
      await waitForRounds(2);
      rounds[1]!.finish();
      expect(await reading).toEqual([{ id: 'theirs' }]);
    });

    it('fails every transaction of a batch whose sync fails: an error, never a success', async () => {
      const batch = ['x', 'y', 'z'].map((id) =>
        db.transaction().execute((trx) => trx.insertInto('items').values({ id }).execute()),
      );
      const write = db.insertInto('items').values({ id: 'w' }).execute();
      await waitForRounds(2);
      rounds[1]!.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
      const results = await Promise.allSettled([...batch, write]);
      expect(results.map((r) => r.status)).toEqual([
        'rejected',
        'rejected',
        'rejected',
        'rejected',
      ]);
      expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/EIO/);
      expect(dialect.counts.failedCommits).toBe(1);
      // Nothing written after it can be made durable: the next writes are refused before they
      // reach the log, and none of them is committed.
      await expect(
        db.transaction().execute((trx) => trx.insertInto('items').values({ id: 'n' }).execute()),
      ).rejects.toThrow(/failed earlier/);
      await expect(db.insertInto('items').values({ id: 'm' }).execute()).rejects.toThrow(
        /failed earlier/,
      );
      expect(committed('n')).toBe(false);
      expect(committed('m')).toBe(false);
      expect(rounds).toHaveLength(2);
    });
  },
);
