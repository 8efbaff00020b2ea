// The bounds on what one run may hand to the host, beside the QuickJS heap's own limit
// (docs/workflows.md, "Limits"). The heap limit bounds only what the guest holds; everything a
// run hands over (variables, roles, mails, a thrown error, its result) is copied to the worker's
// heap, then to the main thread, then into one database transaction, so each has a bound of its
// own, checked as the effect is made. A broken bound fails the run with WORKFLOW_MEMORY.
import type { FailureType, SandboxJob } from './job.js';

export const RUN_BOUNDS = {
  /** Distinct variable names one run may set. */
  namesPerRun: 1000,
  /** Variable names a scope (a transaction, or a pal in an enterprise) may hold. */
  namesPerScope: 10_000,
  /** UTF-8 bytes of a scope's names and values together. */
  bytesPerScope: 1_048_576,
  /** pal.roles.assign and pal.roles.remove calls of one run. */
  roleChangesPerRun: 100,
  /** Roles (SSO and role pairs) a transaction may hold after a run. */
  rolesPerTransaction: 1000,
  /** pal.mail.send calls of one run. */
  mailsPerRun: 20,
  /** Characters of a thrown error's name kept in the answer and the log. */
  errorNameLength: 100,
  /** Characters of a thrown error's message kept in the answer and the log. */
  errorMessageLength: 2000,
  /**
   * Characters of one argument of a `pal` method as it crosses into the host (a string, or an
   * object's JSON text): above every limit of the host API, so a larger one is refused by that
   * limit's own message without being copied whole.
   */
  argumentLength: 131_072,
  /** Characters of a thrown error's stack read for DebugInfo's call stack. */
  stackLength: 16_384,
} as const;

/**
 * The message of a run that broke its time limit (the sandbox's interrupt or the pool's backstop)
 * or its memory limit (the sandbox's allocator, its capped WASM memory, or its worker's heap).
 */
export function limitMessage(
  type: 'WORKFLOW_TIMEOUT' | 'WORKFLOW_MEMORY',
  job: Pick<SandboxJob, 'timeoutMs' | 'memoryBytes'>,
): string {
  return type === 'WORKFLOW_TIMEOUT'
    ? `the workflow ran longer than ${job.timeoutMs} ms`
    : `the workflow used more than ${job.memoryBytes / 1048576} MB of memory`;
}

/**
 * A run whose sandbox broke down rather than failed: the WASM module trapped or aborted (sandbox.ts),
 * or Node ended the worker (pool.ts; ERR_WORKER_OUT_OF_MEMORY for a worker that outgrew its heap).
 * Running out of memory shows as "memory", an access "out of bounds" or an "abort": the run broke
 * its memory limit. Anything else is the sandbox's own failure.
 */
export function breakdown(
  job: Pick<SandboxJob, 'timeoutMs' | 'memoryBytes'>,
  cause: string,
): { type: FailureType; message: string } {
  return /memory|out of bounds|abort/i.test(cause)
    ? { type: 'WORKFLOW_MEMORY', message: limitMessage('WORKFLOW_MEMORY', job) }
    : { type: 'WORKFLOW_ERROR', message: `the sandbox failed: ${cause}` };
}
