// A sandbox worker thread: one sandbox, one run at a time, for as long as the pool keeps it. It
// retires (the pool replaces it) after any run that may have damaged its WASM memory.
import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { SandboxJob, SandboxOutcome } from './job.js';
import { Sandbox } from './sandbox.js';

export interface WorkerData {
  memoryLimitBytes: number;
  codeCacheBytes: number;
}
/**
 * A job as the pool sends it: without its files when the pool knows this worker keeps its version
 * (`codeKey`) compiled, which holds them too.
 */
export type WorkerJob = Omit<SandboxJob, 'files'> & { files: SandboxJob['files'] | undefined };
export interface JobMessage {
  id: number;
  job: WorkerJob;
}
export interface OutcomeMessage {
  id: number;
  outcome: SandboxOutcome;
  /** Whether this worker keeps the job's version compiled after it: its next jobs need no files. */
  keeps: boolean;
  /** Versions whose kept state this worker dropped for room during the job. */
  dropped: string[];
}

const port = parentPort;
if (!port) throw new Error('workflows/worker.ts runs as a worker thread only');

lowerThreadPriority();
const { memoryLimitBytes, codeCacheBytes } = workerData as WorkerData;
const sandbox = await Sandbox.create(memoryLimitBytes, codeCacheBytes);
port.on('message', ({ id, job }: JobMessage) => {
  const files = job.files ?? sandbox.keptFiles(job.codeKey);
  // The pool sends no files only for a version this worker said it keeps, and hears of every one
  // it drops: a worker without them is out of step with its pool, which then replaces it.
  if (files === undefined) throw new Error('a job without files of a version this worker lacks');
  const outcome = sandbox.runJob({ ...job, files });
  const keeps = sandbox.keptFiles(job.codeKey) !== undefined;
  port.postMessage({ id, outcome, keeps, dropped: sandbox.takeDropped() } satisfies OutcomeMessage);
  // The built state written back after the answer, not before the next run: off its path. Not
  // for a worker the pool retires now.
  if (!outcome.retire) sandbox.restore();
});
port.postMessage('ready');

/**
 * Runs this thread at the lowest priority, so that workflows (a loop until its time limit
 * included) take the cores only when the event loop does not need them. On Linux a thread has
 * its own nice value, set through its thread id (/proc/thread-self names it); elsewhere the
 * thread keeps the process's priority.
 */
function lowerThreadPriority(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(threadId)) setPriority(threadId, constants.priority.PRIORITY_LOW);
  } catch {
    // Not Linux, or not allowed: the worker runs at the process's priority.
  }
}
