// The parts of DESIGN §8 that pal and transaction searches share: string filters that match as
// case-insensitive "contains", or with their exact* flag as case-sensitive equality; paging by a
// 0-based startRecord; and the total number of matches for X-Total-Count.
import { sql, type Expression, type SqlBool } from 'kysely';
import { fold, likeContains } from '../storage/conditions.js';
import { InvalidArgumentError } from './errors.js';

/** One page of a search and the number of all matches (`gte`: at least that many). */
export interface Page<T> {
  items: T[];
  total: number;
  totalRelation?: 'eq' | 'gte';
}

export const MAX_FILTER_LENGTH = 1000;

export interface StringFilter {
  /** The parameter's name, for messages. */
  field: string;
  /** Absent or empty: no filter. */
  value: string | undefined;
  exact: boolean | undefined;
  /** The column compared for equality. */
  column: string;
  /** The case-folded copy of that column, which "contains" searches. */
  keyColumn: string;
}

/** A filter's value when one is given (absent or empty: undefined); 400 when it is too long. */
export function filterValue(field: string, value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || value.length > MAX_FILTER_LENGTH) {
    throw new InvalidArgumentError(
      `${field}: must be a text of at most ${MAX_FILTER_LENGTH} characters`,
    );
  }
  return value;
}

/** One condition per string filter given. */
export function stringFilterConditions(filters: StringFilter[]): Expression<SqlBool>[] {
  const conditions: Expression<SqlBool>[] = [];
  for (const filter of filters) {
    const value = filterValue(filter.field, filter.value);
    if (value === undefined) continue;
    conditions.push(
      filter.exact
        ? sql<SqlBool>`${sql.ref(filter.column)} = ${value}`
        : likeContains(filter.keyColumn, fold(value)),
    );
  }
  return conditions;
}

/** A filter that must match exactly (palId, status, …); absent or empty: no filter. */
export function exactCondition(
  field: string,
  column: string,
  value: string | undefined,
): Expression<SqlBool> | undefined {
  if (filterValue(field, value) === undefined) return undefined;
  return sql<SqlBool>`${sql.ref(column)} = ${value}`;
}

/** Optional strings as the API shows them: absent rather than null. */
export function optional(value: string | null): string | undefined {
  return value ?? undefined;
}

/** Drops the keys whose value is undefined, so absent members are absent, not present-but-empty. */
export function withoutUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] === undefined) delete value[key];
  }
  return value;
}
