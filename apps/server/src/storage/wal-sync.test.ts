// The log's syncs off the event loop: who waits for which sync.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { walFileSync, WalSync } from './wal-sync.js';

/** A sync that finishes when the test says so; `calls` counts the syncs begun. */
function heldSync() {
  const rounds: { finish(): void; fail(error: Error): void }[] = [];
  const sync = () =>
    new Promise<void>((finish, fail) => {
      rounds.push({ finish, fail });
    });
  return { sync, rounds };
}

/** Which of the promises have settled, and how, after the microtasks have run. */
async function settled(promises: Promise<void>[]): Promise<string[]> {
  const states = promises.map(() => 'waiting');
  promises.forEach((p, i) =>
    p.then(
      () => (states[i] = 'durable'),
      () => (states[i] = 'failed'),
    ),
  );
  await new Promise((done) => setImmediate(done));
  return states;
}

describe('WalSync', () => {
  it('answers a commit only after a sync that began after it; commits during a sync share the next', async () => {
    const { sync, rounds } = heldSync();
    const log = new WalSync(sync);
    expect(log.pending()).toBeUndefined();
    const first = log.committed();
    expect(rounds).toHaveLength(1);
    // Written while the first sync runs: the running sync may not hold them.
    const second = log.committed();
    const third = log.committed();
    expect(rounds).toHaveLength(1);
    expect(await settled([first, second, third])).toEqual(['waiting', 'waiting', 'waiting']);
    rounds[0]!.finish();
    expect(await settled([first, second, third])).toEqual(['durable', 'waiting', 'waiting']);
    // The next sync began as the first ended, and covers both.
    expect(rounds).toHaveLength(2);
    expect(log.pending()).toBeDefined();
    rounds[1]!.finish();
    expect(await settled([second, third])).toEqual(['durable', 'durable']);
    expect(log.pending()).toBeUndefined();
    expect(rounds).toHaveLength(2);
  });

  it('makes a read wait for the sync of every commit it may have seen', async () => {
    const { sync, rounds } = heldSync();
    const log = new WalSync(sync);
    void log.committed();
    const read = log.pending()!;
    expect(await settled([read])).toEqual(['waiting']);
    rounds[0]!.finish();
    expect(await settled([read])).toEqual(['durable']);
  });

  it('fails the commits of a failed sync, and every commit after it', async () => {
    const { sync, rounds } = heldSync();
    let begun = 0;
    const log = new WalSync(sync, () => (begun += 1));
    const lost = log.committed();
    const waiting = log.committed(); // written during the failing sync
    rounds[0]!.fail(new Error('EIO'));
    await expect(lost).rejects.toThrow('EIO');
    // The log may now miss frames that recovery needs before any later one: nothing more is
    // durable, and no further sync would prove otherwise.
    await expect(waiting).rejects.toThrow(/failed earlier/);
    await expect(log.committed()).rejects.toThrow(/failed earlier/);
    await expect(log.pending()).rejects.toThrow(/failed earlier/);
    expect(begun).toBe(1);
  });

  it('fails a round whose sync throws before it starts (the log cannot be opened)', async () => {
    const log = new WalSync(() => {
      throw new Error('ENOENT');
    });
    await expect(log.committed()).rejects.toThrow('ENOENT');
  });
});

describe('walFileSync', () => {
  it("syncs the database's log file, opened at the first sync", async () => {
    const dir = tempDir('pal-wal-sync-');
    try {
      const path = join(dir.path, 'w.sqlite');
      const missing = walFileSync(path);
      await expect(missing.sync()).rejects.toThrow(/ENOENT.*w\.sqlite-wal/);
      const database = new Database(path);
      database.pragma('journal_mode = WAL');
      database.exec('create table t (x); insert into t values (1)');
      const log = walFileSync(path);
      await log.sync();
      await log.sync();
      await log.close();
      database.close();
    } finally {
      dir.remove();
    }
  });
});
