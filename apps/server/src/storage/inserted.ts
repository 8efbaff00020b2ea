// What an INSERT … ON CONFLICT DO NOTHING tells: whether the row went in (false: a duplicate key).
import type { InsertResult } from 'kysely';

export function rowWasInserted(result: InsertResult | undefined): boolean {
  return Number(result?.numInsertedOrUpdatedRows ?? 0) > 0;
}
