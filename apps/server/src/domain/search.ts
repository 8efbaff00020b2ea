// The parts of docs/decisions.md ("Searches") that pal and transaction searches share: the string
// filters a search gives (one builder for both), and how rows become the API's records.
import type { TextColumn, TextFilter } from '../storage/text-filters.js';

/**
 * A filter's value when one is given (absent or empty: undefined). Its length (at most 1000) is
 * the schema's, checked by the skeleton before the domain sees it.
 */
export function filterValue(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

type ExactFlag<C extends TextColumn> = `exact${Capitalize<C>}`;

/** A search with string filters on `C` and their exact* flags, as PalSearch and TransactionSearch. */
export type TextSearch<C extends TextColumn> = { [K in C]?: string } & {
  [K in ExactFlag<C>]?: boolean;
};

/** The string filters a search gives, on `columns`, each with its exact* flag. */
export function textFilters<C extends TextColumn>(
  search: TextSearch<C>,
  columns: readonly C[],
): TextFilter[] {
  const filters: TextFilter[] = [];
  for (const column of columns) {
    const value = filterValue(search[column] as string | undefined);
    if (value === undefined) continue;
    const flag = `exact${column[0]!.toUpperCase()}${column.slice(1)}` as ExactFlag<C>;
    filters.push({ column, value, exact: (search[flag] as boolean | undefined) === true });
  }
  return filters;
}

/** Optional strings as the API shows them: absent rather than null. */
export function optional(value: string | null): string | undefined {
  return value ?? undefined;
}

/**
 * Drops the keys whose value is undefined, so absent members are absent, not present-but-empty.
 * The wire type is named at the call (`withoutUndefined<PalInfo>({…})`), never inferred from the
 * argument: the literal is then checked against the contract's type, so a member the XSD renamed
 * or removed is a compile error here, not a member the encoders silently send or drop.
 */
export function withoutUndefined<T extends object = never>(value: NoInfer<T>): T {
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] === undefined) delete value[key];
  }
  return value;
}
