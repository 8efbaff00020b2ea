// The context a workflow run works with: the domain's, plus the sandbox workers that run the
// modules. The workers are this layer's own part, so they hang here and not on DomainContext;
// createWorkflowContext is what the assemblers (server.ts, cli.ts, the tests) call, and it hands the
// syntax check down into the domain.
import {
  createDomainContext,
  type DomainContext,
  type DomainContextOptions,
} from '../domain/context.js';
import { WorkerPool } from './pool.js';
import { checkWorkflowSyntax } from './syntax-check.js';

export interface WorkflowContext extends DomainContext {
  /** The sandbox workers that run workflows (threads start at the first run). */
  readonly workflows: WorkerPool;
}

/**
 * How long past its time limit a run may take before its worker is ended: QuickJS checks the
 * limit every few thousand instructions, but not inside a long builtin call.
 */
export const WORKFLOW_BACKSTOP_GRACE_MS = 500;

export function createWorkflowContext(
  options: Omit<DomainContextOptions, 'checkWorkflowSyntax'>,
): WorkflowContext {
  const domain = createDomainContext({ ...options, checkWorkflowSyntax });
  const { config, log } = domain;
  return {
    ...domain,
    workflows: new WorkerPool({
      size: config.workflowWorkers,
      memoryLimitBytes: config.workflowMemoryMb * 1024 * 1024,
      backstopGraceMs: WORKFLOW_BACKSTOP_GRACE_MS,
      workerHeapMb: config.workflowWorkerHeapMb,
      runsPerTenant: config.workflowRunsPerEnterprise,
      queuePerTenant: config.workflowQueuePerEnterprise,
      log,
    }),
  };
}
