// The pal read cache is exact: a write by this process or by another one (the CLI beside the
// server, here a second connection to the same file) is seen by the very next read.
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  deployManifest,
  migratedDatabase,
  testContext,
  type TestContext,
  palSearch,
} from '../../test/helpers.js';
import { createWorkflowContext } from '../workflows/context.js';
import { createEnterprise } from './enterprises.js';
import { cachedPalDetails, getPal, getPalDetails, searchPals } from './pals.js';
import { createTransaction } from './transactions.js';
import { MAX_CACHED_BYTES, ReadCache } from './read-cache.js';
import { dialectOf } from '../storage/adapter-dialect.js';

let t: TestContext | undefined;
afterEach(async () => t?.close());

const manifest = (name: string) => ({
  id: 'p',
  name,
  modes: { transaction: true, console: false, web: false },
});

describe('the pal read cache', () => {
  it('peeks at a cached value without loading it, and at nothing once a write moved the stamp', async () => {
    t = await testContext();
    const e = await createEnterprise(t.ctx, 'acme');
    await deployManifest(t.ctx, e.id, manifest('One'));
    expect(cachedPalDetails(t.ctx, e.id, 'p')).toBeUndefined();
    const details = await getPalDetails(t.ctx, e.id, 'p');
    expect(cachedPalDetails(t.ctx, e.id, 'p')).toBe(details);
    await deployManifest(t.ctx, e.id, manifest('Two'));
    expect(cachedPalDetails(t.ctx, e.id, 'p')).toBeUndefined();
    expect((await getPalDetails(t.ctx, e.id, 'p')).name).toBe('Two');
  });

  it('serves repeated reads from memory: the same object, no new query', async () => {
    t = await testContext();
    const e = await createEnterprise(t.ctx, 'acme');
    await deployManifest(t.ctx, e.id, manifest('One'));
    const first = await getPal(t.ctx, e.id, 'p');
    expect(await getPal(t.ctx, e.id, 'p')).toBe(first);
    const page = await searchPals(t.ctx, e.id, palSearch({ name: 'one' }));
    expect(await searchPals(t.ctx, e.id, palSearch({ name: 'one' }))).toBe(page);
    expect(await searchPals(t.ctx, e.id, palSearch({ name: 'two' }))).not.toBe(page);
  });

  it('sees this process’s own writes at once', async () => {
    t = await testContext();
    const e = await createEnterprise(t.ctx, 'acme');
    await deployManifest(t.ctx, e.id, manifest('One'));
    expect((await getPal(t.ctx, e.id, 'p')).name).toBe('One');
    await deployManifest(t.ctx, e.id, manifest('Two'));
    expect((await getPal(t.ctx, e.id, 'p')).name).toBe('Two');
    expect((await searchPals(t.ctx, e.id, palSearch())).items.map((p) => p.name)).toEqual(['Two']);
  });

  it('keeps the pals while this process writes other tables: transactions do not drop them', async () => {
    t = await testContext();
    const e = await createEnterprise(t.ctx, 'acme');
    await deployManifest(t.ctx, e.id, manifest('One'));
    const pal = await getPal(t.ctx, e.id, 'p');
    const details = await getPalDetails(t.ctx, e.id, 'p');
    for (let i = 0; i < 3; i++) await createTransaction(t.ctx, e.id, 'p');
    expect(await getPal(t.ctx, e.id, 'p')).toBe(pal);
    expect(await getPalDetails(t.ctx, e.id, 'p')).toBe(details);
    await deployManifest(t.ctx, e.id, manifest('Two'));
    expect((await getPalDetails(t.ctx, e.id, 'p')).name).toBe('Two');
  });

  it('sees another process’s writes within the bound (SQLite: pragma data_version, 1 ms; PostgreSQL: the change stamp)', async () => {
    t = await testContext();
    const e = await createEnterprise(t.ctx, 'acme');
    await deployManifest(t.ctx, e.id, manifest('One'));
    expect((await getPal(t.ctx, e.id, 'p')).name).toBe('One');
    expect((await searchPals(t.ctx, e.id, palSearch())).total).toBe(1);

    const otherDb = await migratedDatabase(t.ctx.config);
    const other = createWorkflowContext({
      db: otherDb,
      config: t.ctx.config,
      log: pino({ level: 'silent' }),
    });
    try {
      await deployManifest(other, e.id, manifest('Changed elsewhere'));
      await deployManifest(other, e.id, { ...manifest('Second'), id: 'q' });
    } finally {
      other.mailer.close();
      await otherDb.destroy();
    }
    const bound = dialectOf(t.ctx.db).changeStampBoundMs;
    await new Promise((resolve) => setTimeout(resolve, bound + 1));
    expect((await getPal(t.ctx, e.id, 'p')).name).toBe('Changed elsewhere');
    expect((await searchPals(t.ctx, e.id, palSearch())).total).toBe(2);
  });

  it('sees its own write of a pal that a RETURNING or a WITH hides from the statement’s shape', async () => {
    t = await testContext();
    const e = await createEnterprise(t.ctx, 'acme');
    await deployManifest(t.ctx, e.id, manifest('One'));
    expect((await getPal(t.ctx, e.id, 'p')).name).toBe('One');
    // SQLite takes no write inside a WITH; PostgreSQL answers it with the command SELECT.
    await (
      dialectOf(t.ctx.db).name === 'sqlite'
        ? sql`update pals set name = 'Two' where enterprise_id = ${e.id} returning id`
        : sql`with d as (update pals set name = 'Two' where enterprise_id = ${e.id} returning id) select id from d`
    ).execute(t.ctx.db);
    expect((await getPal(t.ctx, e.id, 'p')).name).toBe('Two');
  });

  it('starts afresh when what it holds would weigh more than its bound, and keeps no value that alone would', async () => {
    const cache = new ReadCache(() => 'a');
    const db = { isTransaction: false };
    /** The cached value of `key`, else `value` loaded, weighing `bytes` when given. */
    const get = (key: string, value: string, bytes?: number) =>
      cache.get(key, db, async () => value, bytes === undefined ? undefined : () => bytes);
    const half = MAX_CACHED_BYTES / 2;
    expect(await get('a', 'A', half)).toBe('A');
    expect(await get('b', 'B', half)).toBe('B');
    expect(await get('a', 'A again')).toBe('A');
    // One more byte: the cache starts afresh with 'c' alone.
    expect(await get('c', 'C', 1)).toBe('C');
    expect(await get('a', 'A loaded')).toBe('A loaded');
    expect(await get('c', 'C again')).toBe('C');
    expect(await get('huge', 'H', MAX_CACHED_BYTES + 1)).toBe('H');
    expect(await get('huge', 'H loaded')).toBe('H loaded');
    expect(await get('c', 'C loaded')).toBe('C');
  });

  it('does not cache failures, and does not keep what changed while it loaded', async () => {
    let stamp = 'a';
    const cache = new ReadCache(() => stamp);
    const db = { isTransaction: false };
    await expect(cache.get('k', db, () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    expect(await cache.get('k', db, async () => 1)).toBe(1);
    expect(await cache.get('k', db, async () => 2)).toBe(1);
    stamp = 'b';
    expect(
      await cache.get('k', db, async () => {
        stamp = 'c';
        return 3;
      }),
    ).toBe(3);
    expect(await cache.get('k', db, async () => 4)).toBe(4);
  });
});
