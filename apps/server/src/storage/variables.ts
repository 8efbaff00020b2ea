// Workflow variables, by scope (schema.ts: VariableScopesTable). Reads return the scope's
// version with its variables; a write names the version it read and fails when another run has
// written since, which the engine turns into a retry of the run.

import type { Db } from './database.js';
import { inParts, rowWasInserted } from './inserted.js';
import { preparedQuery } from './prepared-query.js';

export interface VariableSnapshot {
  /** 0 when the scope was never written. */
  version: number;
  values: Record<string, string>;
}

export function transactionScope(transactionId: string): string {
  return `transaction:${transactionId}`;
}

export function palScope(enterpriseId: string, palId: string): string {
  return `pal:${enterpriseId}:${palId}`;
}

const variablesQuery = preparedQuery((db, p: { scope: string }) =>
  db
    .selectFrom('variable_scopes')
    .leftJoin('variables', 'variables.scope', 'variable_scopes.scope')
    .select(['variable_scopes.version', 'variables.name', 'variables.value'])
    .where('variable_scopes.scope', '=', p.scope),
);

/**
 * The scope's version and variables, read in one statement: on PostgreSQL two statements could
 * see two snapshots (a version after another run's commit with the values before it), and a run
 * would then write its update over values it never saw.
 */
export async function readVariables(db: Db, scope: string): Promise<VariableSnapshot> {
  const rows = await variablesQuery.execute(db, { scope });
  // fromEntries, not assignment: a variable may be named __proto__.
  const values = Object.fromEntries(
    rows.flatMap((row) => (row.name === null || row.value === null ? [] : [[row.name, row.value]])),
  ) as Record<string, string>;
  return { version: rows[0]?.version ?? 0, values };
}

/**
 * Writes `values` into the scope if its version is still `readVersion`; false when another
 * writer came first. Run it inside the transaction that applies the rest of the run's effects.
 */
export async function writeVariables(
  db: Db,
  scope: string,
  enterpriseId: string,
  readVersion: number,
  values: Record<string, string>,
): Promise<boolean> {
  if (readVersion === 0) {
    const created = await db
      .insertInto('variable_scopes')
      .values({ scope, enterprise_id: enterpriseId, version: 1 })
      .onConflict((oc) => oc.column('scope').doNothing())
      .executeTakeFirst();
    if (!rowWasInserted(created)) return false;
  } else {
    const bumped = await db
      .updateTable('variable_scopes')
      .set({ version: readVersion + 1 })
      .where('scope', '=', scope)
      .where('version', '=', readVersion)
      .executeTakeFirst();
    if (bumped.numUpdatedRows === 0n) return false;
  }
  for (const part of inParts(Object.entries(values)))
    await db
      .insertInto('variables')
      .values(part.map(([name, value]) => ({ scope, name, value })))
      .onConflict((oc) =>
        oc.columns(['scope', 'name']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })),
      )
      .execute();
  return true;
}
