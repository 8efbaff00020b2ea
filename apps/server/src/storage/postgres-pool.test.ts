// PostgreSQL's pool under pressure: the sweeps' locks cannot starve it, and a request that finds
// no free connection in time is told to try again (503), not a fault of the server's (500).
import { describeError } from '@pal-workflow/server-skeleton';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engine, freshDatabaseEnv } from '../../test/engine.js';
import { tempDir, testConfig } from '../../test/helpers.js';
import { dialectOf } from './adapter-dialect.js';
import { openDatabase, type Db } from './database.js';
import { DatabaseBusyError } from './postgres.js';

describe.runIf(engine === 'postgres')('PostgreSQL pool (smallest size, 2)', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Db;
  beforeEach(async () => {
    dir = tempDir();
    db = openDatabase(
      testConfig(dir.path, { ...(await freshDatabaseEnv()), DATABASE_POOL_SIZE: '2' }),
    );
  });
  afterEach(async () => {
    await db.destroy();
    dir.remove();
  });

  it('runs two sweeps under their locks at once, one after the other, without waiting out the pool', async () => {
    const dialect = dialectOf(db);
    const order: string[] = [];
    const sweep = (name: string) =>
      dialect.runExclusively(db, name, async () => {
        order.push(`${name} start`);
        // The work uses a second connection while the lock holds the first.
        const { rows } = await sql<{ n: number }>`select 1 as n`.execute(db);
        order.push(`${name} end`);
        return rows[0]!.n;
      });
    const started = performance.now();
    expect(await Promise.all([sweep('expiry-test'), sweep('retention-test')])).toEqual([1, 1]);
    expect(order).toEqual([
      'expiry-test start',
      'expiry-test end',
      'retention-test start',
      'retention-test end',
    ]);
    // Far below the pool's 5 s timeout, which two holders waiting for each other would reach.
    expect(performance.now() - started).toBeLessThan(4000);
  });

  it('answers a query that finds every connection taken for 5 s with 503 DATABASE_BUSY', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holders = [1, 2].map(() => db.connection().execute(() => held));
    try {
      const error = await db
        .selectFrom('enterprises')
        .select('id')
        .execute()
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(DatabaseBusyError);
      expect(describeError(error)).toMatchObject({ status: 503, code: 'DATABASE_BUSY' });
    } finally {
      release();
      await Promise.all(holders);
    }
    // The pool serves again once its connections are back.
    expect(await sql<{ n: number }>`select 1 as n`.execute(db)).toMatchObject({ rows: [{ n: 1 }] });
  }, 15_000);
});
