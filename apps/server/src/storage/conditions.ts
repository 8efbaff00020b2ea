// Search conditions shared by the repositories, in SQL that every supported database accepts.
import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';

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

/**
 * Counts the rows of a query, but stops after `cap`: an exact count of 50,000 matches costs
 * far more than the page it comes with. Past the cap the answer is the cap, as a lower bound.
 */
export async function countUpTo(
  db: Kysely<any>,
  // The query's own selection does not matter: it is replaced.
  query: SelectQueryBuilder<any, any, object>,
  cap: number,
): Promise<{ total: number; totalRelation: 'eq' | 'gte' }> {
  const { n } = await db
    .selectFrom(
      query
        .clearSelect()
        .select(sql.lit(1).as('one'))
        .limit(cap + 1)
        .as('capped'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const count = Number(n);
  return count > cap ? { total: cap, totalRelation: 'gte' } : { total: count, totalRelation: 'eq' };
}
