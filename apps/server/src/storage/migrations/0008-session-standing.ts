// What a browser session rests on (domain/session-standing.ts), so that every request can check
// it is still so: the kind of entry that made it and, for a console session, the profile of the
// console grant. `sso_id` now names the SSO whose standing the session rests on for every kind,
// the SSO an anonymous (T8) token was issued for included. Sessions live 30 minutes idle and 12
// hours at most, so the sessions of the old shape are simply ended (their people enter again).
import type { Kysely, Migration } from 'kysely';

export const sessionStanding: Migration = {
  async up(db: Kysely<any>) {
    await db.deleteFrom('browser_sessions').execute();
    await db.schema.alterTable('browser_sessions').addColumn('kind', 'text').execute();
    await db.schema.alterTable('browser_sessions').addColumn('profile', 'text').execute();
    // The sweep removes sessions past their absolute lifetime by it.
    await db.schema
      .createIndex('browser_sessions_created')
      .on('browser_sessions')
      .column('created_at')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('browser_sessions_created').execute();
    await db.schema.alterTable('browser_sessions').dropColumn('profile').execute();
    await db.schema.alterTable('browser_sessions').dropColumn('kind').execute();
  },
};
