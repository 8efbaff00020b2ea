// vitest globalSetup of the "postgres" project: one throw-away PostgreSQL cluster for the run;
// each test makes its own database in it (test/engine.ts).
import { startPostgresCluster } from '@pal-workflow/test-support';
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
