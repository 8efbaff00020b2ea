// String filters of pal and transaction searches (docs/decisions.md, "Searches"), as storage
// applies them: "contains" against a case-folded copy of the column, or with the exact flag
// case-sensitive equality.
import { sql, type Expression, type SqlBool } from 'kysely';

/** The searchable text columns; each has a case-folded copy `<column>_key`. */
export type TextColumn = 'name' | 'description' | 'category' | 'publisher';

/** One string filter the caller gave (absent or empty filters are not given). */
export interface TextFilter {
  column: TextColumn;
  value: string;
  /** Case-sensitive equality instead of "contains", ignoring case. */
  exact: boolean;
}

/**
 * Case-folds a search string or a stored value the same way for every database: JavaScript's
 * Unicode lower-casing (SQLite's own lower() folds ASCII only).
 */
export function fold(value: string): string {
  return value.toLowerCase();
}

/** The folded copy of an optional text, for its `_key` column. */
export function foldedKey(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : fold(value);
}

/** Escapes LIKE wildcards so the needle matches literally (`ESCAPE '\'`). */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `column LIKE '%needle%' ESCAPE '\'`: the column (already folded) contains the folded needle. */
export function likeContains(column: string, foldedNeedle: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escapeLike(foldedNeedle)}%`} escape '\\'`;
}

/** `table.column = value`: a filter with its exact flag. */
export function equals(table: string, column: TextColumn, value: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(`${table}.${column}`)} = ${value}`;
}
