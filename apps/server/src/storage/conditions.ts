// Search conditions shared by the repositories, in SQL that every supported database accepts.
import { sql, type Expression, type SqlBool } from 'kysely';

/**
 * Case-folds a search string or a stored value the same way for every database: JavaScript's
 * Unicode lower-casing (SQLite's own lower() folds ASCII only).
 */
export function fold(value: string): string {
  return value.toLowerCase();
}

/** Escapes LIKE wildcards so the needle matches literally (`ESCAPE '\'`). */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `column LIKE '%needle%' ESCAPE '\'`: the column (already folded) contains the folded needle. */
export function likeContains(column: string, foldedNeedle: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escapeLike(foldedNeedle)}%`} escape '\\'`;
}
