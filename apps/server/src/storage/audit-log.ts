// The audit_log table (domain/audit.ts): append-only rows, read by `pal audit`, deleted only by
// the retention sweep.
import type { Insertable, Selectable } from 'kysely';
import type { Db } from './database.js';
import type { AuditLogTable, IsoDate } from './schema.js';

export type AuditRow = Selectable<AuditLogTable>;
export type NewAuditRow = Insertable<AuditLogTable>;

export async function insertAuditRows(db: Db, rows: readonly NewAuditRow[]): Promise<void> {
  if (rows.length > 0)
    await db
      .insertInto('audit_log')
      .values([...rows])
      .execute();
}

/** One page of an enterprise's rows from `since` on, in the order they were written. */
export function listAuditRows(
  db: Db,
  query: { enterpriseId: string; since?: IsoDate; afterId: number; limit: number },
): Promise<AuditRow[]> {
  let select = db
    .selectFrom('audit_log')
    .selectAll()
    .where('enterprise_id', '=', query.enterpriseId)
    .where('id', '>', query.afterId);
  if (query.since !== undefined) select = select.where('at', '>=', query.since);
  return select.orderBy('id').limit(query.limit).execute();
}

/** Deletes at most `limit` rows written before `before`; how many. */
export async function deleteAuditRowsBefore(
  db: Db,
  before: IsoDate,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('audit_log')
    .where(
      'id',
      'in',
      db.selectFrom('audit_log').select('id').where('at', '<', before).limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
