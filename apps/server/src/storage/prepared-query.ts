// Queries of the hot paths (T1, T5, T6), built and compiled by Kysely once instead of at every
// call. Kysely copies and freezes its nodes at each builder step and walks them to compile: 3 to
// 7 µs of the event loop a query, some 15 % of a T5 pair's in a profile (docs/performance.md,
// "Queries compiled once"). A prepared query is written with the same builder; its values are
// named slots, bound into the compiled SQL's parameters at each call.
import { createQueryId, type Compilable, type CompiledQuery, type QueryResult } from 'kysely';
import type { Db } from './database.js';

/** Stands in a built query for the value named `name`; the call's value takes its place. */
class Slot {
  constructor(readonly name: string) {}
}

/**
 * The values a query is called with. Each member is, while the query is built, a slot: usable
 * wherever the builder takes one value, never as a list (`in`), a column's name or a condition
 * on whether to add a clause (such a query has a fixed shape; write one per shape).
 */
export type Slots<P> = { readonly [K in keyof P]: P[K] };

interface Compiled {
  readonly compiled: CompiledQuery;
  /** For each parameter of the compiled SQL: the slot it binds, or a constant of the build. */
  readonly bindings: readonly (Slot | { readonly constant: unknown })[];
}

/**
 * The values of an INSERT that names every column of a table but `generated` (`satisfies
 * EveryColumn<…>`): a column added to the table is then a compile error in the insert, where the
 * builder's `values(row)` took whatever the row held.
 */
export type EveryColumn<Table, Generated extends keyof Table = never> = Record<
  Exclude<keyof Table, Generated>,
  unknown
>;

export interface PreparedQuery<P, O> {
  /** The rows it answers (an INSERT, UPDATE or DELETE without RETURNING answers none). */
  execute(db: Db, values: P): Promise<O[]>;
  executeTakeFirst(db: Db, values: P): Promise<O | undefined>;
  /** The driver's whole answer, with the rows it changed. */
  run(db: Db, values: P): Promise<QueryResult<O>>;
  /** How many rows it inserted, updated or deleted. */
  changes(db: Db, values: P): Promise<number>;
}

/** `build` is called once per database handle (its adapter), with slots for the values. */
export function preparedQuery<P extends object, O>(
  build: (db: Db, slots: Slots<P>) => Compilable<O>,
): PreparedQuery<P, O> {
  // Keyed by the handle's adapter: each database handle compiles its own, and its transactions
  // share it.
  const byAdapter = new WeakMap<object, Compiled>();

  function compiledFor(db: Db): Compiled {
    const executor = db.getExecutor();
    // A plugin changes what a query compiles to, yet shares the adapter the cache is keyed by.
    if (executor.plugins.length > 0)
      throw new TypeError('prepared query: a handle with plugins would compile otherwise');
    let entry = byAdapter.get(executor.adapter);
    if (entry === undefined) {
      entry = compile(db, build);
      byAdapter.set(executor.adapter, entry);
    }
    return entry;
  }

  async function run(db: Db, values: P): Promise<QueryResult<O>> {
    const { compiled, bindings } = compiledFor(db);
    const parameters = bindings.map((binding) =>
      binding instanceof Slot
        ? bound(values as Record<string, unknown>, binding.name)
        : binding.constant,
    );
    return db.executeQuery<O>({
      query: compiled.query,
      queryId: createQueryId(),
      sql: compiled.sql,
      parameters,
    });
  }

  return {
    run,
    async execute(db, values) {
      return (await run(db, values)).rows;
    },
    async executeTakeFirst(db, values) {
      return (await run(db, values)).rows[0];
    },
    async changes(db, values) {
      return Number((await run(db, values)).numAffectedRows ?? 0);
    },
  };
}

function compile<P, O>(db: Db, build: (db: Db, slots: Slots<P>) => Compilable<O>): Compiled {
  const slots = new Map<string, Slot>();
  const proxy = new Proxy({} as Slots<P>, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      let slot = slots.get(name);
      if (slot === undefined) slots.set(name, (slot = new Slot(name)));
      return slot;
    },
  });
  const compiled = build(db, proxy).compile();
  return {
    compiled,
    bindings: compiled.parameters.map((parameter) =>
      parameter instanceof Slot ? parameter : { constant: parameter },
    ),
  };
}

function bound(values: Record<string, unknown>, name: string): unknown {
  const value = values[name];
  // A value left out would bind as nothing the driver knows (better-sqlite3 throws on undefined).
  if (value === undefined) throw new TypeError(`prepared query: no value for ${name}`);
  return value;
}
