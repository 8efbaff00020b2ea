// C4 withdraws what a console grant gave, in its commit: the SSO's unused C6 tokens for the pal
// (storage/tokens.ts, deleteUnusedConsoleTokens) and its console sessions on the pal
// (storage/browser-sessions.ts, withdrawConsoleSessions). Without these indexes each C4 read every
// tenant's tokens and sessions while holding the write. Both are partial, of console rows alone:
// other tokens and sessions are not looked up this way, and their inserts need not write them.
import { sql, type Kysely, type Migration } from 'kysely';

export const consoleGrantLookups: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('tokens_console_grant')
      .on('tokens')
      .columns(['sso_id', 'pal_id'])
      .where(sql.ref('kind'), '=', 'console')
      .execute();
    await db.schema
      .createIndex('browser_sessions_console_grant')
      .on('browser_sessions')
      .columns(['sso_id', 'pal_id'])
      .where(sql.ref('kind'), '=', 'console')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('browser_sessions_console_grant').ifExists().execute();
    await db.schema.dropIndex('tokens_console_grant').ifExists().execute();
  },
};
