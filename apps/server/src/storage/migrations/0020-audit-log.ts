// The audit log (docs/events.md): one append-only row per security-relevant act.
// Rows are never changed: a trigger refuses every UPDATE on both engines. They are deleted only
// by the retention sweep (AUDIT_RETENTION_DAYS), which the index on `at` serves.
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const auditLog: Migration = {
  async up(db: Kysely<any>) {
    const dialect = dialectOf(db);
    await dialect
      .serialPrimaryKey(db.schema.createTable('audit_log'), 'id')
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor', 'text')
      .addColumn('target_type', 'text')
      .addColumn('target', 'text')
      .addColumn('ip', 'text')
      .addColumn('request_id', 'text')
      .addColumn('details', 'text')
      .execute();
    // `pal audit --enterprise … --since …` reads one enterprise in id order from a time on.
    await db.schema
      .createIndex('audit_log_enterprise')
      .on('audit_log')
      .columns(['enterprise_id', 'id'])
      .execute();
    await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();

    // Not in StorageDialect: one statement per engine, used by this migration alone.
    if (dialect.name === 'postgres') {
      await sql`create function pal_audit_log_append_only() returns trigger language plpgsql as $$
        begin
          raise exception 'audit_log is append-only';
        end $$`.execute(db);
      await sql`create trigger audit_log_append_only before update on audit_log
        for each row execute function pal_audit_log_append_only()`.execute(db);
    } else {
      await sql`create trigger audit_log_append_only before update on audit_log begin
        select raise(abort, 'audit_log is append-only');
      end`.execute(db);
    }
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('audit_log').execute();
    if (dialectOf(db).name === 'postgres')
      await sql`drop function if exists pal_audit_log_append_only()`.execute(db);
  },
};
