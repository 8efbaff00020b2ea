// A mailed link enters at every use for its seven days, each use a session of its own, so the
// sessions one person holds through links to one transaction are bounded (domain/sessions.ts,
// MAIL_LINK_SESSIONS): starting one more ends the oldest. This index finds them. It is partial,
// of mailed links' sessions alone: the other sessions are not looked up this way, and their
// inserts need not write it.
import { sql, type Kysely, type Migration } from 'kysely';

export const mailLinkSessions: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('browser_sessions_mail_person')
      .on('browser_sessions')
      .columns(['transaction_id', 'sso_id', 'created_at'])
      .where(sql.ref('kind'), '=', 'mail')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('browser_sessions_mail_person').ifExists().execute();
  },
};
