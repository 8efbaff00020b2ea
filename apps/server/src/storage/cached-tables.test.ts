// Which statements may write a table that read caches hold, as the dialects' compilers write them.
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { CACHED_TABLES } from './migrations/0004-change-stamp.js';
import { mayWriteCachedTable, READ_CACHED_TABLES } from './cached-tables.js';
import type { DatabaseSchema } from './schema.js';

// Compile only: neither dialect's driver is ever asked to connect.
const compilers = {
  sqlite: new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: {} as never }) }),
  postgres: new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool: {} as never }) }),
};

describe('mayWriteCachedTable', () => {
  for (const [engine, db] of Object.entries(compilers)) {
    it(`names the cached tables written by ${engine}'s statements, and no others`, () => {
      const writes = (query: { compile(): { sql: string } }) =>
        mayWriteCachedTable(query.compile().sql);
      expect(writes(db.insertInto('pals').values({ id: 'p' } as never))).toBe(true);
      expect(writes(db.updateTable('api_clients').set({ secret_hash: 'x' } as never))).toBe(true);
      expect(writes(db.deleteFrom('enterprises').where('id', '=', 'e'))).toBe(true);
      expect(writes(db.insertInto('pal_versions').values({ version: 1 } as never))).toBe(true);
      expect(writes(db.insertInto('transactions').values({ id: 't' } as never))).toBe(false);
      expect(writes(db.updateTable('transactions').set({ status: 'x' } as never))).toBe(false);
      expect(writes(db.deleteFrom('browser_sessions').where('id_hash', '=', 'h'))).toBe(false);
      expect(
        writes(
          db
            .insertInto('outbox_messages')
            .columns(['id'] as never)
            .expression(db.selectFrom('pals').select('id') as never),
        ),
      ).toBe(false);
    });
  }

  it('counts raw SQL by its target, and a statement of another shape as a possible write', () => {
    expect(mayWriteCachedTable('insert into pal_texts (pal_id) values (?)')).toBe(true);
    expect(mayWriteCachedTable('INSERT OR REPLACE INTO "Pals" values (?)')).toBe(true);
    expect(mayWriteCachedTable('  update or ignore transactions set status = ?')).toBe(false);
    expect(
      mayWriteCachedTable('with n as (select 1) insert into transactions select * from n'),
    ).toBe(true);
    expect(mayWriteCachedTable('truncate pals')).toBe(true);
    expect(mayWriteCachedTable('create table x (id text)')).toBe(true);
    // PostgreSQL's ONLY, a schema's name, and a write hidden in a WITH (its command says SELECT).
    expect(mayWriteCachedTable('update only pals set name = $1')).toBe(true);
    expect(mayWriteCachedTable('delete from only "pals" where id = $1')).toBe(true);
    expect(mayWriteCachedTable('insert into "main"."pals" values (?)')).toBe(true);
    expect(mayWriteCachedTable('insert into public.transactions values ($1)')).toBe(false);
    expect(mayWriteCachedTable('with d as (delete from pals returning id) select id from d')).toBe(
      true,
    );
    // What writes no table: reads, settings, transaction control.
    expect(mayWriteCachedTable('select * from pals')).toBe(false);
    expect(mayWriteCachedTable('set local enable_seqscan = off; set local x = 1')).toBe(false);
    expect(mayWriteCachedTable('savepoint "sp1"')).toBe(false);
    expect(mayWriteCachedTable('begin immediate')).toBe(false);
  });

  it("holds every table whose writes migration 0004's triggers count on PostgreSQL", () => {
    for (const table of CACHED_TABLES) expect(READ_CACHED_TABLES.has(table)).toBe(true);
  });
});
