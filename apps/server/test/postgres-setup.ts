// vitest globalSetup of the "postgres" project: one throw-away PostgreSQL cluster for the run;
// each test makes its own database in it (test/engine.ts).
// From its own module: vitest loads a globalSetup outside the source condition, where the
// package's index would need the workspace packages built (@pal-workflow/validators' dist).
import { startPostgresCluster } from '@pal-workflow/test-support/postgres-cluster';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startPostgresCluster();
  project.provide('postgresAdminUrl', cluster.adminUrl);
  return () => cluster.stop();
}
