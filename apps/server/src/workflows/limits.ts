// The bounds on what one run may hand to the host, beside the QuickJS heap's own limit
// (docs/workflows.md, "Limits"). The heap limit bounds only what the guest holds; everything a
// run hands over (variables, roles, mails, a thrown error, its result) is copied to the worker's
// heap, then to the main thread, then into one database transaction, so each has a bound of its
// own, checked as the effect is made. A broken bound fails the run with WORKFLOW_MEMORY.
import type { SandboxJob } from './job.js';

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

/** The message of a run that passed its time limit (the sandbox's or the pool's backstop). */
export function timeoutMessage(job: Pick<SandboxJob, 'timeoutMs'>): string {
  return `the workflow ran longer than ${job.timeoutMs} ms`;
}

/** The message of a run that passed its memory limit. */
export function memoryMessage(job: Pick<SandboxJob, 'memoryBytes'>): string {
  return `the workflow used more than ${job.memoryBytes / 1048576} MB of memory`;
}

/**
 * `text` cut to `max` characters, saying so: `…` after a name, `… (cut to max of n characters)`
 * after a message. `length` is the whole text's length when only its start was read.
 */
export function cut(
  text: string,
  max: number,
  style: 'name' | 'message',
  length = text.length,
): string {
  if (length <= max) return text;
  const start = text.slice(0, max);
  return style === 'name' ? `${start}…` : `${start}… (cut to ${max} of ${length} characters)`;
}
