import { CompiledQuery, Migrator, sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { engine, freshDatabaseEnv } from '../../test/engine.js';
import { tempDir, testConfig } from '../../test/helpers.js';
import {
  connectDatabase,
  DatabaseError,
  migrateToLatest,
  migrationStatus,
  openDatabase,
  type Db,
} from './database.js';
import { DatabaseUnavailableError } from './postgres.js';
import { dialectOf } from './adapter-dialect.js';
import { wherePalTextsLike, type TransactionTextColumn } from './storage-dialect.js';
import { migrations } from './migrations/index.js';
import { withdrawConsoleSessionsQuery } from './browser-sessions.js';
import {
  deleteSpentTokens,
  spentTokensQuery,
  unusedConsoleTokensQuery,
  unusedTransactionTokensQuery,
} from './tokens.js';
import { fold, type TextColumn, type TextFilter } from './text-filters.js';
import { MIGRATION_NAMES } from '../../test/migration-names.js';

describe(`database (${engine})`, () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Db;
  let env: Record<string, string>;
  beforeEach(async () => {
    dir = tempDir();
    env = await freshDatabaseEnv();
    db = openDatabase(testConfig(dir.path, env));
  });
  afterEach(async () => {
    await db.destroy();
    dir.remove();
  });

  it.runIf(engine === 'sqlite')(
    'opens the file with WAL, synchronous=FULL (the reader; the writer syncs off the event loop) and foreign keys on',
    async () => {
      const pragma = async (name: string) =>
        Object.values((await sql.raw(`pragma ${name}`).execute(db)).rows[0] as object)[0];
      expect(await pragma('journal_mode')).toBe('wal');
      expect(await pragma('synchronous')).toBe(2); // FULL
      expect(await pragma('foreign_keys')).toBe(1);
    },
  );

  it('migrates a fresh database to the latest schema, once', async () => {
    expect(await migrationStatus(db)).toEqual(
      MIGRATION_NAMES.map((name) => ({ name, applied: false })),
    );
    expect(await migrateToLatest(db)).toEqual(Object.keys(migrations));
    expect(await migrateToLatest(db)).toEqual([]);
    expect((await migrationStatus(db)).every((m) => m.applied)).toBe(true);

    const tables = (await db.introspection.getTables()).map((t) => t.name);
    for (const table of [
      'enterprises',
      'api_clients',
      'pals',
      'pal_versions',
      'pal_documents',
      'document_contents',
      'accounts',
      'ssos',
      'invitations',
      'console_grants',
      'transactions',
      'transaction_roles',
      'tokens',
      'variable_scopes',
      'variables',
      'browser_sessions',
      'sign_in_failures',
      'workflow_mail_counts',
      'audit_log',
      'idempotency_keys',
      'transaction_field_values',
      'transaction_signatures',
      'transaction_completed_documents',
      'transaction_uploads',
    ]) {
      expect(tables).toContain(table);
    }
  });

  /** An enterprise and a pal in a migrated database; inserts transactions of that pal. */
  async function transactionsOfOnePal() {
    const now = new Date().toISOString();
    await db
      .insertInto('enterprises')
      .values({ id: 'e', name: 'E', name_key: 'e', created_at: now })
      .execute();
    await db
      .insertInto('pals')
      .values({
        enterprise_id: 'e',
        id: 'p',
        version: 1,
        name: null,
        name_key: null,
        description: null,
        description_key: null,
        category: null,
        category_key: null,
        publisher: null,
        publisher_key: null,
        branch_name: null,
        mode_transaction: 1,
        mode_console: 0,
        mode_web: 0,
        shadow: 0,
        shell: 0,
        test: 0,
        installed: 0,
        deployed: 1,
        manifest: '{}',
        content_hash: 'x',
        create_date: now,
        last_modified_date: now,
      })
      .execute();
    const insert = (id: string, name: string, description: string | null = null, on: Db = db) =>
      on
        .insertInto('transactions')
        .values({
          id,
          enterprise_id: 'e',
          pal_id: 'p',
          pal_version: 1,
          name,
          name_key: name.toLowerCase(),
          description,
          description_key: description?.toLowerCase() ?? null,
          category: null,
          category_key: null,
          status: 'NEW',
          system_status: 'OPEN',
          web_service_status: 'IDLE',
          test: 0,
          create_date: now,
          modified_date: now,
          execute_end_date: null,
          access_end_date: null,
          archive_end_date: null,
        })
        .execute();
    return insert;
  }

  it('keeps the transaction text index in step with inserts, updates and deletes', async () => {
    await migrateToLatest(db);
    const insert = await transactionsOfOnePal();
    await insert('t1', 'Quarterly Expense Report', 'Urgent: for the board');
    await insert('t2', 'Travel expenses 50%_off', 'routine');
    const contains = async (needle: string) => {
      const { query, creationOrder } = dialectOf(db).whereTransactionTextsContain(
        db.selectFrom('transactions'),
        [{ column: 'name_key', foldedNeedle: needle }],
      );
      const rows = await query.select('transactions.id').orderBy(creationOrder).execute();
      return rows.map((r) => r.id);
    };

    expect(await contains('expense')).toEqual(['t1', 't2']);
    expect(await contains('report')).toEqual(['t1']);
    expect(await contains('50%_')).toEqual(['t2']); // wildcards are literal
    expect(await contains('0%')).toEqual(['t2']); // short: the LIKE fallback, escaped too
    expect(await contains('%')).toEqual(['t2']);
    expect(await contains('xyz')).toEqual([]);
    expect(await contains('"ex')).toEqual([]); // quotes cannot break out of the phrase
    const texts = async (...filters: [TransactionTextColumn, string][]) => {
      const { query, creationOrder } = dialectOf(db).whereTransactionTextsContain(
        db.selectFrom('transactions'),
        filters.map(([column, foldedNeedle]) => ({ column, foldedNeedle })),
      );
      return (await query.select('transactions.id').orderBy(creationOrder).execute()).map(
        (r) => r.id,
      );
    };
    // Several columns in one index look-up (AND), and a short needle through the LIKE fallback.
    expect(await texts(['name_key', 'expense'], ['description_key', 'urgent'])).toEqual(['t1']);
    expect(await texts(['description_key', 'rout'])).toEqual(['t2']);
    expect(await texts(['name_key', 'expense'], ['description_key', 'or'])).toEqual(['t1']);
    expect(await texts(['description_key', 'expense'])).toEqual([]); // a needle stays in its column

    await db
      .updateTable('transactions')
      .set({ name: 'Budget', name_key: 'budget' })
      .where('id', '=', 't1')
      .execute();
    expect(await contains('report')).toEqual([]);
    expect(await contains('udg')).toEqual(['t1']);
    await db.deleteFrom('transactions').where('id', '=', 't2').execute();
    expect(await contains('expense')).toEqual([]);
    if (engine === 'sqlite') {
      const check =
        await sql`insert into transactions_name_fts(transactions_name_fts) values ('integrity-check')`.execute(
          db,
        );
      expect(check).toBeDefined();
    }
  });

  it.runIf(engine === 'sqlite')(
    "indexes a batch's new rows once, before its COMMIT: what is committed is always indexed",
    async () => {
      await migrateToLatest(db);
      const insert = await transactionsOfOnePal();
      await insert('t0', 'Indexed long ago');
      const pending = (on: Db) =>
        sql<{ n: number }>`select count(*) as n from transactions_text_pending`
          .execute(on)
          .then((r) => Number(r.rows[0]!.n));
      const named = (needle: string) =>
        dialectOf(db)
          .whereTransactionTextsContain(db.selectFrom('transactions'), [
            { column: 'name_key', foldedNeedle: needle },
          ])
          .query.select('transactions.id')
          .orderBy('transactions.id')
          .execute()
          .then((rows) => rows.map((r) => r.id));
      let notedBeforeCommit = -1;
      const results = await Promise.allSettled([
        db.transaction().execute(async (trx) => {
          await insert('t1', 'Alpha report', null, trx);
          // Noted, not yet indexed: the index is written once, before the batch's COMMIT.
          notedBeforeCommit = await pending(trx);
        }),
        db.transaction().execute(async (trx) => {
          await insert('t2', 'Beta draft', null, trx);
          await trx
            .updateTable('transactions')
            .set({ name_key: 'beta memo' })
            .where('id', '=', 't2')
            .execute();
        }),
        db.transaction().execute(async (trx) => {
          await insert('t3', 'Gamma report', null, trx);
          await trx.deleteFrom('transactions').where('id', '=', 't3').execute();
        }),
        db.transaction().execute(async (trx) => {
          await trx
            .updateTable('transactions')
            .set({ name_key: 'indexed report' })
            .where('id', '=', 't0')
            .execute();
        }),
        db.transaction().execute(async (trx) => {
          await insert('t4', 'Delta report', null, trx);
          throw new Error('rolled back');
        }),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'rejected',
      ]);
      expect(notedBeforeCommit).toBe(1);
      expect(await pending(db)).toBe(0);
      expect(await named('report')).toEqual(['t0', 't1']);
      expect(await named('memo')).toEqual(['t2']);
      expect(await named('draft')).toEqual([]);
      // A write outside a transaction is indexed before its own COMMIT too.
      await insert('t5', 'Epsilon report');
      expect(await named('report')).toEqual(['t0', 't1', 't5']);
      // The index agrees with the table, row for row (FTS5 checks against its content table).
      for (const index of ['name', 'description', 'category'])
        await sql`insert into ${sql.raw(`transactions_${index}_fts`)}(${sql.raw(`transactions_${index}_fts`)}, rank) values ('integrity-check', 1)`.execute(
          db,
        );
    },
  );

  it.runIf(engine === 'sqlite')(
    'migration 0025 goes down to indexing each insert at once, and up again, losing no row',
    async () => {
      await migrateToLatest(db);
      const insert = await transactionsOfOnePal();
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      const named = async (needle: string) =>
        (
          await dialectOf(db)
            .whereTransactionTextsContain(db.selectFrom('transactions'), [
              { column: 'name_key', foldedNeedle: needle },
            ])
            .query.select('transactions.id')
            .orderBy('transactions.id')
            .execute()
        ).map((r) => r.id);
      await insert('t1', 'Before the way down');
      expect((await migrator.migrateTo('0024_completed_documents')).error).toBeUndefined();
      await insert('t2', 'While down');
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      await insert('t3', 'Up again');
      expect(await named('own')).toEqual(['t1', 't2']);
      expect(await named('up again')).toEqual(['t3']);
      await sql`insert into transactions_name_fts(transactions_name_fts, rank) values ('integrity-check', 1)`.execute(
        db,
      );
    },
  );

  it.runIf(engine === 'postgres')(
    'migration 0026 samples 1,000 values of each searched text for the planner, and down resets it',
    async () => {
      await migrateToLatest(db);
      const targets = async () =>
        (
          await sql<{ attname: string; target: number | null }>`
            select attname, attstattarget as target from pg_attribute
            where attrelid = 'transactions'::regclass
              and attname in ('name_key', 'description_key', 'category_key')
            order by attname`.execute(db)
        ).rows.map((r) => [r.attname, r.target === null ? -1 : Number(r.target)]);
      expect(await targets()).toEqual([
        ['category_key', 1000],
        ['description_key', 1000],
        ['name_key', 1000],
      ]);
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('0025_deferred_text_index')).error).toBeUndefined();
      // -1, or null from PostgreSQL 17 on: the server's default.
      expect((await targets()).map(([, target]) => target)).toEqual([-1, -1, -1]);
    },
  );

  // The count of a "contains" search turns plans off for itself and answers before its COMMIT:
  // nothing of that may reach the pool's next user, whether the count succeeds or fails.
  it.runIf(engine === 'postgres')(
    "counts a search's matches up to the cap, and leaves its connection as it found it",
    async () => {
      await db.destroy();
      db = openDatabase(testConfig(dir.path, { ...env, DATABASE_POOL_SIZE: '2' }));
      await migrateToLatest(db);
      await transactionsOfOnePal();
      const now = new Date().toISOString();
      await sql`
        insert into transactions (id, enterprise_id, pal_id, pal_version, name, name_key, status,
          system_status, web_service_status, test, create_date, modified_date)
        select 't' || i, 'e', 'p', 1, named, lower(named), 'NEW', 'OPEN', 'IDLE', 0, ${now}, ${now}
        from generate_series(1, 3000) as i,
          lateral (select case when i > 2980 then 'Rare Needle ' || i
                               else 'Common row ' || i end as named) as n`.execute(db);
      const dialect = dialectOf(db);
      const search = (needle: string) =>
        dialect.whereTransactionTextsContain(
          db.selectFrom('transactions').where('transactions.enterprise_id', '=', 'e'),
          [{ column: 'name_key', foldedNeedle: needle }],
        ).query;
      // Both connections of the pool, one after the other and at once.
      const settings = () =>
        Promise.all(
          [1, 2].map(() =>
            db.connection().execute(async (connection) => {
              const { rows } = await sql<{ scan: string; index: string; open: boolean }>`
                select current_setting('enable_seqscan') as scan,
                  current_setting('enable_indexscan') as index,
                  now() <> statement_timestamp() as open`.execute(connection);
              return rows[0];
            }),
          ),
        );

      expect(await dialect.countUpTo(db, search('needle'), 1000, true)).toEqual({ total: 20 });
      expect(
        await Promise.all([
          dialect.countUpTo(db, search('common'), 1000, true),
          dialect.countUpTo(db, search('nowhere'), 1000, true),
        ]),
      ).toEqual([{ total: 1000, totalRelation: 'gte' }, { total: 0 }]);
      const failing = search('needle').where(sql<boolean>`1 / (length(name) - length(name)) = 1`);
      await expect(dialect.countUpTo(db, failing, 1000, true)).rejects.toThrow(/division by zero/);
      // Plans back on, and no transaction left open (a statement in one would share its now()).
      for (const found of await settings())
        expect(found).toEqual({ scan: 'on', index: 'on', open: false });
    },
  );

  // Each batch of the token sweep passed over every live token to find the used ones.
  it.runIf(engine === 'sqlite')(
    'finds spent tokens through tokens_expires and tokens_used (migration 0027), and down drops it',
    async () => {
      await migrateToLatest(db);
      // Planned where the sweep's DELETE runs, in a transaction on the writer. (Outside one, a
      // read goes to the reader connection, whose EXPLAIN shows the schema it loaded before the
      // migration: EXPLAIN runs nothing, so nothing makes it load the schema again.)
      const plan = () =>
        db.transaction().execute(async (trx) => {
          const { sql: text, parameters } = spentTokensQuery(trx, new Date().toISOString())
            .limit(1000)
            .compile();
          const rows = await trx.executeQuery<{ detail: string }>(
            CompiledQuery.raw(`explain query plan ${text}`, [...parameters]),
          );
          return rows.rows.map((r) => r.detail).join('\n');
        });
      const lines = await plan();
      expect(lines).toMatch(/MULTI-INDEX OR/);
      expect(lines).toMatch(/tokens_used/);
      expect(lines).toMatch(/tokens_expires/);
      expect(lines).not.toMatch(/SCAN tokens/);

      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('0026_text_statistics')).error).toBeUndefined();
      expect(await plan()).not.toMatch(/tokens_used/);
    },
  );

  // PostgreSQL sweeps in the database, off the event loop; an index on used_at would cost every
  // redemption its HOT update (migration 0027). C4's index (0031) holds no column a redemption
  // changes.
  it.runIf(engine === 'postgres')('has no index on tokens.used_at', async () => {
    await migrateToLatest(db);
    const { rows } = await sql<{ indexname: string }>`
      select indexname from pg_indexes where tablename = 'tokens' order by indexname`.execute(db);
    expect(rows.map((r) => r.indexname)).toEqual([
      'tokens_console_grant',
      'tokens_expires',
      'tokens_pkey',
      'tokens_transaction_sso',
    ]);
  });

  it.runIf(engine === 'sqlite')(
    "finds C4's tokens and sessions through their console-grant indexes (migration 0031), and down drops them",
    async () => {
      await migrateToLatest(db);
      const grant = { enterpriseId: 'e', palId: 'p', ssoId: 's', profile: 'personal' as const };
      // On the writer, as C4 runs them (see the test of 0027 above).
      const plan = () =>
        db.transaction().execute(async (trx) => {
          const details: string[] = [];
          for (const query of [
            unusedConsoleTokensQuery(trx, grant),
            withdrawConsoleSessionsQuery(trx, grant),
          ]) {
            const { sql: text, parameters } = query.compile();
            const rows = await trx.executeQuery<{ detail: string }>(
              CompiledQuery.raw(`explain query plan ${text}`, [...parameters]),
            );
            details.push(rows.rows.map((r) => r.detail).join(' '));
          }
          return details;
        });
      const [tokens, sessions] = await plan();
      expect(tokens).toMatch(/USING INDEX tokens_console_grant/);
      expect(sessions).toMatch(/USING INDEX browser_sessions_console_grant/);

      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('0030_mail_link_sessions')).error).toBeUndefined();
      const [before, beforeSessions] = await plan();
      expect(before).not.toMatch(/tokens_console_grant/);
      expect(beforeSessions).not.toMatch(/browser_sessions_console_grant/);
    },
  );

  it.runIf(engine === 'sqlite')(
    "finds T7's and T4's tokens through tokens_transaction_sso (migration 0032), and down drops it",
    async () => {
      await migrateToLatest(db);
      const where = { enterpriseId: 'e', ssoId: 's' };
      const plan = (extra = '') =>
        db.transaction().execute(async (trx) => {
          const details: string[] = [];
          for (const transactionId of ['t', null]) {
            const { sql: text, parameters } = unusedTransactionTokensQuery(trx, {
              ...where,
              transactionId,
            }).compile();
            const rows = await trx.executeQuery<{ detail: string }>(
              CompiledQuery.raw(`explain query plan ${text}${extra}`, [...parameters]),
            );
            details.push(rows.rows.map((r) => r.detail).join(' '));
          }
          return details;
        });
      for (const detail of await plan())
        expect(detail).toMatch(/USING INDEX tokens_transaction_sso/);

      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('0031_console_grant_lookups')).error).toBeUndefined();
      // A new text: the driver keeps prepared statements, and SQLite does not prepare an EXPLAIN
      // again after a schema change (it reads no table), so the same text showed the old plan.
      for (const detail of await plan(' -- after 0032 down'))
        expect(detail).not.toMatch(/tokens_transaction_sso/);
    },
  );

  it('keys accounts per mailbox (migration 0033): IDNA and Unicode forms rewritten, two of one mailbox both kept', async () => {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('0032_transaction_token_lookups')).error).toBeUndefined();
    const now = '2026-11-29T00:00:00.000Z';
    // As the old key had them: each address in lower case, so these were three accounts.
    const accounts = [
      ['a1', 'Ann@Example.org'],
      ['a2', 'evé@exämple.com'],
      ['a3', 'evé@xn--exmple-cua.com'],
      ['a4', 'ｚｏｅ@example.org'],
    ];
    for (const [id, email] of accounts)
      await db
        .insertInto('accounts')
        .values({
          id: id!,
          email: email!,
          email_key: email!.toLowerCase(),
          first_name: 'F',
          last_name: 'L',
          created_at: now,
          updated_at: now,
        })
        .execute();
    const keys = async () =>
      Object.fromEntries(
        (await db.selectFrom('accounts').select(['id', 'email_key']).orderBy('id').execute()).map(
          (r) => [r.id, r.email_key],
        ),
      );
    expect((await migrator.migrateTo('0033_email_keys_per_mailbox')).error).toBeUndefined();
    expect(await keys()).toEqual({
      a1: 'ann@example.org',
      // One mailbox: the account whose old key is the new one keeps it, the other its old key.
      a2: 'evé@exämple.com',
      a3: 'evé@xn--exmple-cua.com',
      a4: 'zoe@example.org',
    });
    expect((await migrator.migrateDown()).error).toBeUndefined();
    expect(await keys()).toEqual(
      Object.fromEntries(accounts.map(([id, email]) => [id, email!.toLowerCase()])),
    );
  });

  it('sweeps a used token once its use is past, expired or not', async () => {
    await migrateToLatest(db);
    const at = (seconds: number) => new Date(Date.UTC(2026, 10, 26, 9, 0, seconds)).toISOString();
    await db
      .insertInto('enterprises')
      .values({ id: 'e', name: 'e', name_key: 'e', created_at: at(0) })
      .execute();
    const token = (hash: string, expiresAt: string, usedAt: string | null) => ({
      token_hash: hash,
      kind: 'transaction',
      enterprise_id: 'e',
      pal_id: null,
      transaction_id: null,
      sso_id: null,
      action: null,
      data: null,
      created_at: at(0),
      expires_at: expiresAt,
      used_at: usedAt,
    });
    await db
      .insertInto('tokens')
      .values([
        token('live', at(50), null),
        token('expired', at(10), null),
        token('used-now', at(50), at(20)),
        token('used-later', at(50), at(21)),
      ])
      .execute();
    const left = async () =>
      (await db.selectFrom('tokens').select('token_hash').orderBy('token_hash').execute()).map(
        (r) => r.token_hash,
      );
    // A use at the sweep's own instant counts; one after it waits for the next round.
    expect(await deleteSpentTokens(db, at(20), 1000)).toBe(2);
    expect(await left()).toEqual(['live', 'used-later']);
    expect(await deleteSpentTokens(db, at(21), 1000)).toBe(1);
    expect(await left()).toEqual(['live']);
  });

  it('serves the P1/C1 text filters through the pal text index, with the rows LIKE finds', async () => {
    // Pals inserted before the migration that makes the index: it indexes existing rows too.
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('0005_sign_in_failures')).error).toBeUndefined();
    const now = new Date().toISOString();
    for (const id of ['e', 'other']) {
      await db
        .insertInto('enterprises')
        .values({ id, name: id, name_key: id, created_at: now })
        .execute();
    }
    const insertPal = (
      enterpriseId: string,
      id: string,
      texts: Partial<Record<TextColumn, string>>,
    ) =>
      db
        .insertInto('pals')
        .values({
          enterprise_id: enterpriseId,
          id,
          version: 1,
          name: texts.name ?? null,
          name_key: texts.name === undefined ? null : fold(texts.name),
          description: texts.description ?? null,
          description_key: texts.description === undefined ? null : fold(texts.description),
          category: texts.category ?? null,
          category_key: texts.category === undefined ? null : fold(texts.category),
          publisher: texts.publisher ?? null,
          publisher_key: texts.publisher === undefined ? null : fold(texts.publisher),
          branch_name: null,
          mode_transaction: 1,
          mode_console: 0,
          mode_web: 0,
          shadow: 0,
          shell: 0,
          test: 0,
          installed: 0,
          deployed: 1,
          manifest: '{}',
          content_hash: 'x',
          create_date: now,
          last_modified_date: now,
        })
        .execute();
    await insertPal('e', 'p1', {
      name: 'Quarterly Expense Report',
      description: 'Urgent: for the board',
      category: 'Finance',
      publisher: 'ACME',
    });
    await migrateToLatest(db);
    await insertPal('e', 'p2', {
      name: 'Travel 50%_off',
      description: 'Path C:\\Temp\\files',
      category: 'Finance',
    });
    await insertPal('e', 'p3', {
      name: 'Straße Überweisung',
      description: 'ÉCOLE publique',
      publisher: 'Ünïcode Ltd',
    });
    await insertPal('e', 'p4', {});
    await insertPal('other', 'p1', { name: 'Expense elsewhere', category: 'Finance' });

    const ids = async (
      filters: readonly TextFilter[],
      matchAny = false,
      through: 'index' | 'like' = 'index',
    ) => {
      const base = db.selectFrom('pals').where('enterprise_id', '=', 'e');
      const query =
        through === 'index'
          ? dialectOf(db).wherePalTextsMatch(base, filters, matchAny)
          : wherePalTextsLike(base, filters, matchAny);
      return (await query.select('pals.id').orderBy('pals.id').execute()).map((r) => r.id);
    };
    const has = (column: TextColumn, value: string, exact = false): TextFilter => ({
      column,
      value,
      exact,
    });
    // Each engine's answer is LIKE's, for wildcards, backslashes, non-ASCII, short needles.
    const cases: [readonly TextFilter[], boolean][] = [];
    for (const needle of [
      'expense',
      'EXPENSE',
      '50%_',
      '%_o',
      '0%',
      '%',
      '_',
      'c:\\t',
      '\\te',
      '\\',
      'straße',
      'STRASSE',
      'ÜBER',
      'éco',
      'ün',
      'xyz',
      '"ex',
      'ex" OR "e',
      'name_key : "e',
    ]) {
      for (const column of ['name', 'description', 'category', 'publisher'] as const) {
        cases.push([[has(column, needle)], false]);
      }
    }
    for (const matchAny of [false, true]) {
      cases.push([[has('name', 'expense'), has('category', 'finance')], matchAny]);
      cases.push([[has('name', 'travel'), has('description', 'école')], matchAny]);
      cases.push([[has('name', 'straße'), has('publisher', 'ü')], matchAny]);
      cases.push([[has('name', 'report'), has('category', 'Finance', true)], matchAny]);
      cases.push([[has('name', 'Travel 50%_off', true), has('publisher', 'acme')], matchAny]);
      cases.push([[has('category', 'finance', true), has('description', 'urgent')], matchAny]);
    }
    for (const [filters, matchAny] of cases) {
      expect(await ids(filters, matchAny), JSON.stringify({ filters, matchAny })).toEqual(
        await ids(filters, matchAny, 'like'),
      );
    }
    // The comparison is not vacuous.
    expect(await ids([has('name', 'EXPENSE')])).toEqual(['p1']);
    expect(await ids([has('name', '50%_')])).toEqual(['p2']);
    expect(await ids([has('description', 'c:\\t')])).toEqual(['p2']);
    expect(await ids([has('name', 'STRASSE')])).toEqual([]);
    expect(await ids([has('name', 'straße')])).toEqual(['p3']);
    expect(await ids([has('publisher', 'ÜNÏ')])).toEqual(['p3']);
    expect(await ids([has('name', 'expense'), has('description', 'école')], true)).toEqual([
      'p1',
      'p3',
    ]);
    expect(await ids([has('name', 'report'), has('category', 'Finance', true)])).toEqual(['p1']);
    expect(await ids([has('name', 'report'), has('category', 'finance', true)])).toEqual([]);

    // Kept in step with updates and deletes, and with an enterprise's deletion (cascade).
    await db
      .updateTable('pals')
      .set({ name: 'Budget', name_key: 'budget' })
      .where('enterprise_id', '=', 'e')
      .where('id', '=', 'p1')
      .execute();
    expect(await ids([has('name', 'expense')])).toEqual([]);
    expect(await ids([has('name', 'udg')])).toEqual(['p1']);
    await db.deleteFrom('pals').where('enterprise_id', '=', 'e').where('id', '=', 'p2').execute();
    expect(await ids([has('category', 'finance')])).toEqual(['p1']);
    await db.deleteFrom('enterprises').where('id', '=', 'other').execute();

    const plan = async (filters: readonly TextFilter[], matchAny: boolean) => {
      if (engine === 'sqlite') {
        const { sql: text, parameters } = dialectOf(db)
          .wherePalTextsMatch(
            db.selectFrom('pals').where('enterprise_id', '=', 'e'),
            filters,
            matchAny,
          )
          .select('pals.id')
          .compile();
        const values = [...parameters];
        const rows = await sql
          .raw<{ detail: string }>(
            `explain query plan ${text.replace(/\?/g, () => `'${String(values.shift()).replace(/'/g, "''")}'`)}`,
          )
          .execute(db);
        return rows.rows.map((r) => r.detail).join('\n');
      }
      // PostgreSQL: a few rows are cheapest to scan; with scans off, the trigram indexes serve.
      return db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        await sql`set local enable_indexscan = off`.execute(trx);
        const { sql: text, parameters } = dialectOf(trx)
          .wherePalTextsMatch(trx.selectFrom('pals'), filters, matchAny)
          .select('pals.id')
          .compile();
        const rows = await sql
          .raw<{ 'QUERY PLAN': string }>(
            `explain ${text.replace(/\$(\d+)/g, (_, n: string) => `'${String(parameters[Number(n) - 1])}'`)}`,
          )
          .execute(trx);
        return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    };
    const index = engine === 'sqlite' ? /pal_texts_fts/ : /pals_name_key_trgm/;
    expect(await plan([has('name', 'expense')], false)).toMatch(index);
    expect(await plan([has('name', 'expense'), has('publisher', 'acme')], true)).toMatch(index);
    if (engine === 'sqlite') {
      // A short needle, ORed: LIKE over the enterprise's pals, as before the index.
      expect(await plan([has('name', 'expense'), has('publisher', 'ac')], true)).not.toMatch(index);
      const check =
        await sql`insert into pal_texts_fts(pal_texts_fts) values ('integrity-check')`.execute(db);
      expect(check).toBeDefined();
      const { n } = await db
        .selectFrom(sql`pal_texts`.as('t'))
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(n)).toBe(3); // p1, p3, p4 of e; none of the deleted enterprise's
    }
  });

  it.runIf(engine === 'postgres')(
    'serves "contains" through the pg_trgm indexes (when the planner may not scan the table)',
    async () => {
      await migrateToLatest(db);
      const plan = await db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        const { query } = dialectOf(trx).whereTransactionTextsContain(
          trx.selectFrom('transactions'),
          [
            { column: 'name_key', foldedNeedle: 'expense' },
            { column: 'description_key', foldedNeedle: 'urgent' },
          ],
        );
        const { sql: text, parameters } = query.select('transactions.id').compile();
        return sql
          .raw<{ 'QUERY PLAN': string }>(
            `explain ${text.replace(/\$(\d+)/g, (_, n: string) => `'${String(parameters[Number(n) - 1])}'`)}`,
          )
          .execute(trx);
      });
      const lines = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(lines).toMatch(/transactions_(name|description)_trgm/);
    },
  );

  it.runIf(engine === 'postgres')(
    'makes the same tables and columns as the migrations make on SQLite',
    async () => {
      await migrateToLatest(db);
      const sqlite = openDatabase(testConfig(dir.path));
      try {
        await migrateToLatest(sqlite);
        // Names only: SQLite reports its text primary keys as nullable (a legacy quirk of
        // SQLite; no code inserts a NULL key), and the column types are each engine's own.
        const shape = async (d: Db) =>
          (await d.introspection.getTables())
            // SQLite's full-text indexes, pal_texts (the stable keys one of them needs) and the
            // rows a batch has yet to index;
            // PostgreSQL's shared rate counts (SQLite's processes count in memory).
            .filter(
              (t) =>
                !t.name.includes('_fts') &&
                !['pal_texts', 'transactions_text_pending', 'rate_limits'].includes(t.name),
            )
            .map((t) => `${t.name}(${t.columns.map((c) => c.name).join(',')})`)
            .sort();
        expect(await shape(db)).toEqual(await shape(sqlite));
      } finally {
        await sqlite.destroy();
      }
    },
  );

  it('runs work under one name in one process at a time (PostgreSQL: an advisory lock)', async () => {
    await migrateToLatest(db);
    const other = openDatabase(testConfig(dir.path, env));
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const first = dialectOf(db).runExclusively(db, 'sweep', async () => {
        await held;
        return 'first';
      });
      await new Promise((resolve) => setTimeout(resolve, 50)); // the lock is taken
      const second = await dialectOf(other).runExclusively(other, 'sweep', async () => 'second');
      const elsewhere = await dialectOf(other).runExclusively(other, 'other', async () => 'other');
      release();
      expect(await first).toBe('first');
      expect(elsewhere).toBe('other');
      // SQLite has one server: it always runs the work. PostgreSQL skips while another holds it.
      expect(second).toBe(engine === 'sqlite' ? 'second' : undefined);
      expect(await dialectOf(other).runExclusively(other, 'sweep', async () => 'again')).toBe(
        'again',
      );
    } finally {
      await other.destroy();
    }
  });

  it('refuses a database whose schema is newer than this program, and changes nothing', async () => {
    await migrateToLatest(db);
    await db
      .insertInto('kysely_migration' as never)
      .values({ name: '9999_from_the_future', timestamp: new Date().toISOString() } as never)
      .execute();
    await expect(migrateToLatest(db)).rejects.toThrow(
      new DatabaseError(
        'the database schema is newer than this program (it has migration 9999_from_the_future, which this version does not know): run the newer version, or restore a backup',
      ),
    );
  });

  it('says in one line, without the password, that an unreachable database cannot be used', async () => {
    const config = testConfig(dir.path, {
      DATABASE_URL: 'postgres://pal:s3cret@127.0.0.1:1/pal',
    });
    const error = await connectDatabase(config).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as Error).message).toMatch(
      /^cannot use the database postgres:\/\/pal:\*\*\*@127\.0\.0\.1:1\/pal: connect ECONNREFUSED 127\.0\.0\.1:1$/,
    );
  });

  it.runIf(engine === 'postgres')(
    'refuses a PostgreSQL database that is not UTF-8, or whose text does not sort by bytes',
    async () => {
      const adminUrl = inject('postgresAdminUrl');
      const made = async (name: string, options: string) => {
        const admin = new pg.Client({ connectionString: adminUrl });
        await admin.connect();
        try {
          await admin.query(`create database ${name} template template0 ${options}`);
        } finally {
          await admin.end();
        }
        const url = new URL(adminUrl);
        url.pathname = `/${name}`;
        return url.toString();
      };
      const suffix = `${process.pid}_${Date.now().toString(36)}`;
      const cases = [
        [
          `pal_ascii_${suffix}`,
          "encoding 'SQL_ASCII' lc_collate 'C' lc_ctype 'C'",
          'its encoding is SQL_ASCII, not UTF8',
        ],
        // ICU's collation sorts "a" before "B", whatever datcollate says.
        [
          `pal_icu_${suffix}`,
          "encoding 'UTF8' locale 'C' locale_provider icu icu_locale 'en-US'",
          'its text does not sort by bytes',
        ],
      ] as const;
      for (const [name, options, problem] of cases) {
        const url = await made(name, options);
        const error = await connectDatabase(testConfig(dir.path, { DATABASE_URL: url })).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, name).toBeInstanceOf(DatabaseError);
        expect((error as Error).message).toContain(problem);
        expect((error as Error).message).toContain("ENCODING 'UTF8' LC_COLLATE 'C'");
        // Refused before any migration: nothing was written to it.
        const check = new pg.Client({ connectionString: url });
        await check.connect();
        try {
          const { rows } = await check.query(
            "select count(*)::int as n from information_schema.tables where table_schema = 'public'",
          );
          expect(rows[0].n, name).toBe(0);
        } finally {
          await check.end();
        }
      }
      // The cluster's own databases (UTF-8, C) are taken: every other test here uses one.
    },
  );

  // pg-pool listens for the errors of idle connections only; one that PostgreSQL ends while a
  // request holds it (a restart, a failover, pg_terminate_backend) emitted 'error' with no
  // listener, and the whole node exited.
  it.runIf(engine === 'postgres')(
    'a connection PostgreSQL ends while a transaction holds it fails that transaction, not the process',
    async () => {
      const admin = new pg.Client({ connectionString: inject('postgresAdminUrl') });
      await admin.connect();
      try {
        const failed = await db
          .transaction()
          .execute(async (trx) => {
            const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(
              trx,
            );
            await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
            // The connection's 'error' arrives while the transaction still holds it.
            await sleep(300);
            return sql`select 1`.execute(trx);
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        // A 503 to the request: the database is away for now, no fault of the server's.
        expect(failed).toBeInstanceOf(DatabaseUnavailableError);
        expect((failed as DatabaseUnavailableError).statusCode).toBe(503);
        // The pool left the dead connection, and the next query has a live one.
        const { rows } = await sql<{ n: number }>`select 2 as n`.execute(db);
        expect(rows[0]!.n).toBe(2);
      } finally {
        await admin.end();
      }
    },
  );

  it('rejects a row whose enterprise does not exist (foreign keys are enforced)', async () => {
    await migrateToLatest(db);
    await expect(
      db
        .insertInto('api_clients')
        .values({
          id: 'c',
          enterprise_id: 'missing',
          username: 'u',
          secret_hash: 'h',
          created_at: 'now',
        })
        .execute(),
    ).rejects.toThrow(/foreign key/i);
  });
});
