// The audit_log table (domain/audit.ts): append-only rows, read by `pal audit`, deleted only by
// the retention sweep.
import type { Insertable, Selectable } from 'kysely';
import type { Db } from './database.js';
import { type EveryColumn, preparedQuery } from './prepared-query.js';
import type { AuditLogTable, IsoDate } from './schema.js';

export type AuditRow = Selectable<AuditLogTable>;
export type NewAuditRow = Insertable<AuditLogTable>;

/** What an audit record is written with: every column but the id, null where there is nothing. */
export type AuditRowValues = Required<Omit<NewAuditRow, 'id'>>;

/** One record, the common case (every request that writes writes one). */
const insertOneQuery = preparedQuery((db, p: AuditRowValues) =>
  db.insertInto('audit_log').values({
    at: p.at,
    enterprise_id: p.enterprise_id,
    action: p.action,
    outcome: p.outcome,
    actor_type: p.actor_type,
    actor: p.actor,
    target_type: p.target_type,
    target: p.target,
    ip: p.ip,
    request_id: p.request_id,
    details: p.details,
  } satisfies EveryColumn<AuditLogTable, 'id'>),
);

export async function insertAuditRows(db: Db, rows: readonly AuditRowValues[]): Promise<void> {
  if (rows.length === 1) await insertOneQuery.run(db, rows[0]!);
  else if (rows.length > 1)
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
