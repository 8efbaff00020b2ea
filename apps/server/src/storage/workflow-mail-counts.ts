// The workflow_mail_counts table: each enterprise's workflow mails in the current clock hour,
// shared by every node on the database (workflows/mail.ts keeps the quota).
import { sql } from 'kysely';
import type { Db } from './database.js';
import type { IsoDate } from './schema.js';

/**
 * Adds `count` mails to the enterprise's hour that began at `hourStart`, in one statement, and
 * answers the hour's total with them. A row of an earlier hour starts afresh; a row of a later
 * hour (another node's clock ahead) keeps counting, so no node's mails are lost. Run it inside
 * the transaction that applies the run's effects: a failed run then counts nothing.
 */
export async function addWorkflowMails(
  db: Db,
  enterpriseId: string,
  hourStart: IsoDate,
  count: number,
): Promise<number> {
  const sameOrLater = sql<boolean>`workflow_mail_counts.hour_start >= excluded.hour_start`;
  const row = await db
    .insertInto('workflow_mail_counts')
    .values({ enterprise_id: enterpriseId, hour_start: hourStart, sent: count })
    .onConflict((oc) =>
      oc.column('enterprise_id').doUpdateSet({
        // Both read the row as it was before this update (SQL's SET semantics, on both engines).
        sent: sql<number>`case when ${sameOrLater} then workflow_mail_counts.sent + excluded.sent else excluded.sent end`,
        hour_start: sql<IsoDate>`case when ${sameOrLater} then workflow_mail_counts.hour_start else excluded.hour_start end`,
      }),
    )
    .returning('sent')
    .executeTakeFirstOrThrow();
  return Number(row.sent);
}
