// What crosses the thread boundary between the engine (main thread) and a sandbox worker: plain,
// structured-clone-able data only. The worker never sees the database; the engine never sees
// QuickJS.
import { createHash } from 'node:crypto';
import type * as Wire from '@pal-workflow/types';

/**
 * The failure types of docs/workflows.md ("When a run fails"), as they appear in `messages[].type`
 * and errorResults.
 */
export type FailureType = 'WORKFLOW_ERROR' | 'WORKFLOW_TIMEOUT' | 'WORKFLOW_MEMORY' | 'NO_WORKFLOW';

/** A transaction as a workflow sees it (`pal.transaction`). */
export interface TransactionView {
  id: string;
  palId: string;
  status: string;
  systemStatus: string;
  webServiceStatus: string;
}

export interface RoleView {
  sso: string;
  role: string;
}

/** One run: which code, which export, with what input and what state it may read. */
export interface SandboxJob {
  /** The pal version's files, path → source. Module names below resolve to these paths. */
  files: Record<string, string>;
  /**
   * Names `files` exactly (a digest of them and their owner, codeKeyOf): a worker keeps a key's
   * modules compiled, and starts each run of that key from them. Absent: the run compiles every
   * module of `files` first.
   */
  codeKey?: string;
  /** The manifest's `workflows`: module name → path, for `pal.call`. */
  modules: Record<string, string>;
  /** The module to run (a name in `modules`). */
  module: string;
  exportName: string;
  /** JSON text of the export's first argument. */
  inputJson: string;
  /** Variables visible to `pal.vars` when the run starts. */
  vars: Record<string, string>;
  transaction?: TransactionView;
  roles?: RoleView[];
  /**
   * Transaction runs: the transaction's documents as `pal.documents.list()` shows them (the spec's
   * Document, no content), with the values and signatures of the form that started the run.
   */
  documents?: Wire.Document[];
  /**
   * A COMPLETED transaction's completed PDFs that are written (docs/web-mode.md), file → base64,
   * for `pal.documents.completed(file)`; absent before the transaction completes.
   */
  completedDocuments?: Record<string, string>;
  /** Transaction runs: the files uploaded on its session pages, described (`pal.documents.uploads()`). */
  uploads?: Wire.UploadInfo[];

  /** systemStatus moves a workflow may make: event → the states it may start from, and its target. */
  moves: Record<string, { from: readonly string[]; to: string }>;
  timeoutMs: number;
  memoryBytes: number;
  /** Longest return value accepted, in UTF-16 code units of its JSON text (past it: WORKFLOW_MEMORY). */
  maxResultLength: number;
}

/**
 * A digest of a pal version's files (path and text, in path order) and of their owner (the
 * enterprise, so that no two tenants share a kept state, even of the same files): the
 * SandboxJob's `codeKey`. Made once per version a process reads (engine.ts keeps it with the code).
 */
export function codeKeyOf(owner: string, files: Record<string, string>): string {
  const hash = createHash('sha256').update(JSON.stringify(owner));
  for (const path of Object.keys(files).sort()) hash.update(JSON.stringify([path, files[path]]));
  return hash.digest('base64url');
}

/** What a successful run asks the engine to keep; applied all together, or not at all. */
export interface RunEffects {
  vars: Record<string, string>;
  /** The business status set last by `pal.transaction.setStatus`. */
  status?: string;
  /** systemStatus events in the order the workflow made them. */
  moves: string[];
  roles: ({ op: 'assign'; sso: string; role: string } | { op: 'remove'; sso: string })[];
  mails: { to: string; subject: string; text: string; action: string }[];
  /** Field values set by `pal.documents.setField`, in order (a later one of a field wins). */
  fields: { file: string; fieldId: string; value: string }[];
  /** Signatures `pal.documents.clearSignature` took back, to be given again. */
  clearedSignatures: { file: string; signatureId: string }[];
}

/** One stack frame of a failed run: `function (module:line)` in DebugInfo's words. */
export interface StackFrame {
  functionName: string;
  /** The manifest's name of the module (`user`); a file no module names keeps its path. */
  module: string;
  line: number;
}

/** A failed run: its type (docs/workflows.md, "When a run fails"), message and the pal's frames. */
export interface RunFailure {
  ok: false;
  type: FailureType;
  message: string;
  frames: StackFrame[];
}

/**
 * How a run ended: the one outcome type of a run, from the sandbox to the engine. The sandbox's
 * value is the JSON text of the export's return value (undefined when it returned nothing); the
 * engine makes it into the operation's answer (engine.ts, `RunAnswer`).
 */
export type RunOutcome<T> = { ok: true; value: T; effects: RunEffects } | RunFailure;

/** What a worker answers for a job: the run's outcome, with what it logged and how long it took. */
export type SandboxOutcome = RunOutcome<string | undefined> & {
  logs: string[];
  durationMs: number;
  /**
   * The worker must not run anything else: its WASM memory may be damaged, or has grown (a
   * module never gives memory back). Set on successful runs too.
   */
  retire?: boolean;
};
