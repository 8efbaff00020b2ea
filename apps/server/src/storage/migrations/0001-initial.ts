// The first schema: tenants, clients, pals, people, transactions, roles, tokens.
// Written with Kysely's schema builder in portable SQL; the few dialect-specific steps go through
// StorageDialect. Never edit a released migration: add a new one.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const initial: Migration = {
  async up(db: Kysely<any>) {
    const dialect = dialectOf(db);

    await db.schema
      .createTable('enterprises')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_key', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_clients')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('username', 'text', (c) => c.notNull().unique())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('api_clients_enterprise')
      .on('api_clients')
      .column('enterprise_id')
      .execute();

    await db.schema
      .createTable('pals')
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('name_key', 'text')
      .addColumn('description', 'text')
      .addColumn('description_key', 'text')
      .addColumn('category', 'text')
      .addColumn('category_key', 'text')
      .addColumn('publisher', 'text')
      .addColumn('publisher_key', 'text')
      .addColumn('branch_name', 'text')
      .addColumn('mode_transaction', 'integer', (c) => c.notNull())
      .addColumn('mode_console', 'integer', (c) => c.notNull())
      .addColumn('mode_web', 'integer', (c) => c.notNull())
      .addColumn('shadow', 'integer', (c) => c.notNull())
      .addColumn('shell', 'integer', (c) => c.notNull())
      .addColumn('test', 'integer', (c) => c.notNull())
      .addColumn('installed', 'integer', (c) => c.notNull())
      .addColumn('deployed', 'integer', (c) => c.notNull())
      .addColumn('manifest', 'text', (c) => c.notNull())
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('create_date', 'text', (c) => c.notNull())
      .addColumn('last_modified_date', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('pals_pk', ['enterprise_id', 'id'])
      .execute();
    // Exact-match filters of PalSearch. "Contains" filters compare the *_key columns of the
    // enterprise's rows, which the primary key's enterprise_id prefix narrows to a few.
    for (const column of ['name', 'description', 'category', 'publisher', 'mode_console']) {
      await db.schema
        .createIndex(`pals_${column}`)
        .on('pals')
        .columns(['enterprise_id', column])
        .execute();
    }

    await db.schema
      .createTable('pal_versions')
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('pal_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('manifest', 'text', (c) => c.notNull())
      .addColumn('files', 'text', (c) => c.notNull())
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('deployed_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('pal_versions_pk', ['enterprise_id', 'pal_id', 'version'])
      .addForeignKeyConstraint(
        'pal_versions_pal',
        ['enterprise_id', 'pal_id'],
        'pals',
        ['enterprise_id', 'id'],
        (f) => f.onDelete('cascade'),
      )
      .execute();

    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('email_key', 'text', (c) => c.notNull().unique())
      .addColumn('first_name', 'text', (c) => c.notNull())
      .addColumn('last_name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('ssos')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('ssos_enterprise_account')
      .on('ssos')
      .columns(['enterprise_id', 'account_id'])
      .execute();
    await db.schema.createIndex('ssos_account').on('ssos').column('account_id').execute();

    await db.schema
      .createTable('invitations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('sso_id', 'text', (c) => c.notNull().references('ssos.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema.createIndex('invitations_sso').on('invitations').column('sso_id').execute();

    await db.schema
      .createTable('console_grants')
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('pal_id', 'text', (c) => c.notNull())
      .addColumn('sso_id', 'text', (c) => c.notNull().references('ssos.id').onDelete('cascade'))
      .addColumn('profile', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('console_grants_pk', [
        'enterprise_id',
        'pal_id',
        'sso_id',
        'profile',
      ])
      .addForeignKeyConstraint(
        'console_grants_pal',
        ['enterprise_id', 'pal_id'],
        'pals',
        ['enterprise_id', 'id'],
        (f) => f.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('console_grants_sso')
      .on('console_grants')
      .column('sso_id')
      .execute();

    let transactions = db.schema.createTable('transactions');
    transactions = dialect.serialPrimaryKey(transactions, 'seq');
    await transactions
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('pal_id', 'text', (c) => c.notNull())
      .addColumn('pal_version', 'integer', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('name_key', 'text')
      .addColumn('description', 'text')
      .addColumn('description_key', 'text')
      .addColumn('category', 'text')
      .addColumn('category_key', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('system_status', 'text', (c) => c.notNull())
      .addColumn('web_service_status', 'text', (c) => c.notNull())
      .addColumn('test', 'integer', (c) => c.notNull())
      .addColumn('create_date', 'text', (c) => c.notNull())
      .addColumn('modified_date', 'text', (c) => c.notNull())
      .addColumn('execute_end_date', 'text')
      .addColumn('access_end_date', 'text')
      .addColumn('archive_end_date', 'text')
      .addForeignKeyConstraint('transactions_pal', ['enterprise_id', 'pal_id'], 'pals', [
        'enterprise_id',
        'id',
      ])
      .execute();
    // The unfiltered listing (an enterprise's transactions in creation order), then one index per
    // exact filter of TransactionSearch. "name contains" has its own index (the dialect's).
    await db.schema
      .createIndex('transactions_enterprise_seq')
      .on('transactions')
      .columns(['enterprise_id', 'seq'])
      .execute();
    // The same without test transactions (T2's default), and small enough to check each match of
    // the name index against enterprise and test flag without reading the table.
    await db.schema
      .createIndex('transactions_enterprise_test_seq')
      .on('transactions')
      .columns(['enterprise_id', 'test', 'seq'])
      .execute();
    for (const column of [
      'name',
      'description',
      'category',
      'status',
      'system_status',
      'web_service_status',
      'pal_id',
    ]) {
      await db.schema
        .createIndex(`transactions_${column}`)
        .on('transactions')
        .columns(['enterprise_id', column])
        .execute();
    }
    // The lifecycle sweep: open transactions whose execution time is over.
    await db.schema
      .createIndex('transactions_due')
      .on('transactions')
      .columns(['system_status', 'execute_end_date'])
      .execute();
    await dialect.createTransactionTextIndex(db);

    await db.schema
      .createTable('transaction_roles')
      .addColumn('transaction_id', 'text', (c) =>
        c.notNull().references('transactions.id').onDelete('cascade'),
      )
      .addColumn('sso_id', 'text', (c) => c.notNull().references('ssos.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('transaction_roles_pk', ['transaction_id', 'sso_id', 'role'])
      .execute();
    // TransactionSearch.sso and T4 (all roles of an SSO).
    await db.schema
      .createIndex('transaction_roles_sso')
      .on('transaction_roles')
      .columns(['sso_id', 'transaction_id'])
      .execute();

    await db.schema
      .createTable('tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('pal_id', 'text')
      .addColumn('transaction_id', 'text')
      .addColumn('sso_id', 'text')
      .addColumn('action', 'text')
      .addColumn('data', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema.createIndex('tokens_expires').on('tokens').column('expires_at').execute();
  },

  async down(db: Kysely<any>) {
    await dialectOf(db).dropTransactionTextIndex(db);
    for (const table of [
      'tokens',
      'transaction_roles',
      'transactions',
      'console_grants',
      'invitations',
      'ssos',
      'accounts',
      'pal_versions',
      'pals',
      'api_clients',
      'enterprises',
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
