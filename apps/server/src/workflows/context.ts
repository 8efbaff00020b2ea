// The context a workflow run works with: the domain's, plus the engine's state (the sandbox
// workers that run the modules, the line of runs per transaction, the cached pal code). That state
// is this layer's own part, so it hangs here and not on DomainContext;
// createWorkflowContext is what the assemblers (server.ts, cli.ts, the tests) call, and it hands the
// deploy's check of the modules down into the domain.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import {
  createDomainContext,
  type DomainContext,
  type DomainContextOptions,
} from '../domain/context.js';
import { EngineState } from './engine-state.js';
import { WorkerPool } from './pool.js';
import { checkPalWorkflows } from './deploy-check.js';

export interface WorkflowContext extends DomainContext {
  /** The engine's state, one per service: its workers, its line of runs, its cached code. */
  readonly engine: EngineState;
}

/**
 * How long past its time limit a run may take before its worker is ended: QuickJS checks the
 * limit every few thousand instructions, but not inside a long builtin call.
 */
const WORKFLOW_BACKSTOP_GRACE_MS = 500;

export function createWorkflowContext(
  options: Omit<DomainContextOptions, 'checkWorkflows'>,
): WorkflowContext {
  const domain = createDomainContext({ ...options, checkWorkflows: checkPalWorkflows });
  return { ...domain, engine: new EngineState(createWorkerPool(domain.config, domain.log)) };
}

/** The sandbox workers the settings ask for: the service's, or `pal run`'s single one. */
export function createWorkerPool(
  config: Pick<
    Config,
    | 'workflowWorkers'
    | 'workflowMemoryMb'
    | 'workflowWorkerHeapMb'
    | 'workflowCodeCacheMb'
    | 'workflowRunsPerEnterprise'
    | 'workflowQueuePerEnterprise'
  >,
  log: Logger,
): WorkerPool {
  return new WorkerPool({
    size: config.workflowWorkers,
    memoryLimitBytes: config.workflowMemoryMb * 1024 * 1024,
    backstopGraceMs: WORKFLOW_BACKSTOP_GRACE_MS,
    workerHeapMb: config.workflowWorkerHeapMb,
    codeCacheBytes: config.workflowCodeCacheMb * 1024 * 1024,
    runsPerTenant: config.workflowRunsPerEnterprise,
    queuePerTenant: config.workflowQueuePerEnterprise,
    log,
  });
}
