// What an INSERT tells of the rows it wrote, and how many rows one statement takes.
import type { InsertResult } from 'kysely';

/** Whether an INSERT … ON CONFLICT DO NOTHING of one row put it in (false: a duplicate key). */
export function rowWasInserted(result: InsertResult | undefined): boolean {
  return insertedRows(result) > 0;
}

/** The rows an INSERT wrote (… ON CONFLICT DO NOTHING leaves the duplicates out). */
export function insertedRows(result: InsertResult | undefined): number {
  return Number(result?.numInsertedOrUpdatedRows ?? 0);
}

/**
 * The most rows one multi-row statement writes: a few columns each stays far below the bound
 * parameters both engines take (SQLite 32,766, PostgreSQL 65,535).
 */
export const ROWS_PER_STATEMENT = 512;

/**
 * `rows` in runs whose lengths are powers of two up to ROWS_PER_STATEMENT, longest first (20
 * rows: 16 and 4; none for none). A statement's text depends on its number of rows, and SQLite's
 * prepared statements are kept per text (storage/sqlite.ts): so a write takes at most a few
 * statements, and however many rows pals write, each table's multi-row INSERT has at most ten
 * texts to keep, not one per count.
 */
export function inParts<T>(rows: readonly T[]): T[][] {
  const parts: T[][] = [];
  let start = 0;
  while (start < rows.length) {
    let length = ROWS_PER_STATEMENT;
    while (length > rows.length - start) length /= 2;
    parts.push(rows.slice(start, start + length));
    start += length;
  }
  return parts;
}
