// Group commit on a SQLite file, seen from a second connection that only sees what is committed.
import Database from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { groupCommitCounts, openSqlite, sqliteDialect } from './sqlite.js';

interface Schema {
  items: { id: string };
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
      await trx.insertInto('items').values({ id: 's' }).execute();
      await gate;
    });
    await new Promise((done) => setTimeout(done, 5));
    // A reader caching now sees no row: what it cached must not outlive the COMMIT.
    const beforeCommit = stamp();
    finish();
    await writing;
    expect(stamp()).not.toBe(beforeCommit);
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
