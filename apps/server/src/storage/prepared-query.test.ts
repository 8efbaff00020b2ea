import { CamelCasePlugin } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engine, freshDatabaseEnv } from '../../test/engine.js';
import { tempDir, testConfig } from '../../test/helpers.js';
import { migrateToLatest, openDatabase, type Db } from './database.js';
import { preparedQuery } from './prepared-query.js';

describe(`preparedQuery (${engine})`, () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Db;
  beforeEach(async () => {
    dir = tempDir();
    db = openDatabase(testConfig(dir.path, await freshDatabaseEnv()));
    await migrateToLatest(db);
    await db
      .insertInto('enterprises')
      .values([
        { id: 'e1', name: 'One', name_key: 'one', created_at: '2026-01-01T00:00:00.000Z' },
        { id: 'e2', name: 'Two', name_key: 'two', created_at: '2026-01-02T00:00:00.000Z' },
        { id: 'e3', name: 'Three', name_key: 'three', created_at: '2026-01-03T00:00:00.000Z' },
      ])
      .execute();
  });
  afterEach(async () => {
    await db.destroy();
    dir.remove();
  });

  /** Enterprises named `name` created after `after`, with a constant condition of the build. */
  function enterprisesQuery(builds: { count: number }) {
    return preparedQuery((db, p: { name: string; after: string }) => {
      builds.count++;
      return db
        .selectFrom('enterprises')
        .select(['id', 'name'])
        .where('name', '<>', 'Nobody')
        .where((eb) => eb.or([eb('name', '=', p.name), eb('created_at', '>', p.after)]))
        .orderBy('id');
    });
  }

  it('builds once and binds each call its own values, constants kept', async () => {
    const builds = { count: 0 };
    const query = enterprisesQuery(builds);
    expect(await query.execute(db, { name: 'One', after: '2026-01-02T12:00:00.000Z' })).toEqual([
      { id: 'e1', name: 'One' },
      { id: 'e3', name: 'Three' },
    ]);
    expect(await query.execute(db, { name: 'Two', after: '2027-01-01T00:00:00.000Z' })).toEqual([
      { id: 'e2', name: 'Two' },
    ]);
    expect(
      await query.executeTakeFirst(db, { name: 'Nobody', after: '2027-01-01T00:00:00.000Z' }),
    ).toBeUndefined();
    // A transaction of the same database shares its compiled SQL.
    await db.transaction().execute(async (trx) => {
      expect(
        await query.execute(trx, { name: 'Three', after: '2027-01-01T00:00:00.000Z' }),
      ).toEqual([{ id: 'e3', name: 'Three' }]);
    });
    expect(builds.count).toBe(1);
  });

  it('inserts each call its own row, and keeps a constant list of the build', async () => {
    const builds = { count: 0 };
    const insert = preparedQuery((db, p: { id: string; name: string }) => {
      builds.count++;
      return db.insertInto('enterprises').values({
        id: p.id,
        name: p.name,
        name_key: p.name,
        created_at: '2026-02-01T00:00:00.000Z',
      });
    });
    await insert.run(db, { id: 'e4', name: 'four' });
    await insert.run(db, { id: 'e5', name: 'five' });
    const named = preparedQuery((db, p: { after: string }) =>
      db
        .selectFrom('enterprises')
        .select(['id', 'name'])
        .where('id', 'in', ['e1', 'e4', 'e5'])
        .where('created_at', '>', p.after)
        .orderBy('id'),
    );
    expect(await named.execute(db, { after: '2026-01-15T00:00:00.000Z' })).toEqual([
      { id: 'e4', name: 'four' },
      { id: 'e5', name: 'five' },
    ]);
    expect(await named.execute(db, { after: '2025-01-01T00:00:00.000Z' })).toEqual([
      { id: 'e1', name: 'One' },
      { id: 'e4', name: 'four' },
      { id: 'e5', name: 'five' },
    ]);
    expect(builds.count).toBe(1);
  });

  it('refuses a handle with plugins, whose SQL would differ under the same adapter', async () => {
    const query = preparedQuery((db, p: { id: string }) =>
      db.selectFrom('enterprises').select('id').where('id', '=', p.id),
    );
    expect(await query.execute(db, { id: 'e1' })).toEqual([{ id: 'e1' }]);
    const withPlugin = db.withPlugin(new CamelCasePlugin());
    await expect(query.execute(withPlugin, { id: 'e1' })).rejects.toThrow('plugins');
  });

  it('runs a write and answers how many rows it changed', async () => {
    const rename = preparedQuery((db, p: { id: string; name: string }) =>
      db.updateTable('enterprises').set({ name: p.name }).where('id', '=', p.id),
    );
    const result = await rename.run(db, { id: 'e2', name: 'Deux' });
    expect(Number(result.numAffectedRows)).toBe(1);
    expect(Number((await rename.run(db, { id: 'missing', name: 'X' })).numAffectedRows)).toBe(0);
    const rows = await db.selectFrom('enterprises').select('name').orderBy('id').execute();
    expect(rows.map((r) => r.name)).toEqual(['One', 'Deux', 'Three']);
  });

  it('refuses a call that leaves a value out, before anything runs', async () => {
    const rename = preparedQuery((db, p: { id: string; name: string }) =>
      db.updateTable('enterprises').set({ name: p.name }).where('id', '=', p.id),
    );
    await expect(rename.run(db, { id: 'e1' } as { id: string; name: string })).rejects.toThrow(
      'prepared query: no value for name',
    );
    const row = await db
      .selectFrom('enterprises')
      .select('name')
      .where('id', '=', 'e1')
      .executeTakeFirst();
    expect(row?.name).toBe('One');
  });
});
