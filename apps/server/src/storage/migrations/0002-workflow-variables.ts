// Workflow variables (pal.vars, docs/workflows.md): string values kept per scope, a transaction or
// a pal in an enterprise. Each scope has a version that every successful run bumps when it writes,
// so two runs that read the same variables cannot both write (no lost update, on any number of
// nodes).
import type { Kysely, Migration } from 'kysely';

export const workflowVariables: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('variable_scopes')
      .addColumn('scope', 'text', (c) => c.primaryKey())
      .addColumn('enterprise_id', 'text', (c) =>
        c.notNull().references('enterprises.id').onDelete('cascade'),
      )
      .addColumn('version', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('variables')
      .addColumn('scope', 'text', (c) =>
        c.notNull().references('variable_scopes.scope').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('variables_pk', ['scope', 'name'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('variables').execute();
    await db.schema.dropTable('variable_scopes').execute();
  },
};
