// Shared by the workflow engine's tests: a sandbox job of a transaction module, and a session
// action run as the session page runs it (runAction, without the page).
import type { WorkflowContext } from '../src/workflows/context.js';
import type { ActionOutcome } from '../src/domain/sessions.js';
import { TRANSACTION_EVENTS } from '../src/domain/transaction-lifecycle.js';
import { runAction } from '../src/workflows/entries.js';
import type { SandboxJob } from '../src/workflows/job.js';

/** A run of the export `run` of a one-file transaction module, on an OPEN transaction. */
export function sandboxJob(source: string, over: Partial<SandboxJob> = {}): SandboxJob {
  return {
    files: { 'workflows/tx.js': source },
    modules: { transaction: 'workflows/tx.js' },
    module: 'transaction',
    exportName: 'run',
    inputJson: '{}',
    vars: { seen: 'before' },
    transaction: {
      id: 't1',
      palId: 'p',
      status: 'NEW',
      systemStatus: 'OPEN',
      webServiceStatus: 'RUNNING',
    },
    roles: [{ sso: 's1', role: 'owner' }],
    moves: { complete: TRANSACTION_EVENTS.complete, cancel: TRANSACTION_EVENTS.cancel },
    timeoutMs: 1000,
    memoryBytes: 64 * 1024 * 1024,
    maxResultLength: 1 << 20,
    ...over,
  };
}

/** The export `action` of a transaction's module, run for the SSO (or anonymously) in a session. */
export function runSessionAction(
  domain: WorkflowContext,
  session: { enterpriseId: string; palId: string; transactionId: string; sso?: string },
  action: string,
): Promise<ActionOutcome> {
  const { sso, ...rest } = session;
  return runAction(
    domain,
    {
      ...rest,
      kind: sso ? 'participant' : 'anonymous',
      ssoId: sso ?? null,
      // runAction does not re-check standing (the session's request hooks do), so any SSO will do.
      standingSso: sso ?? '',
      role: sso ? 'participant' : 'anonymous',
      profile: null,
      csrf: '',
      outcome: null,
    },
    action,
    {},
  );
}
