// A sandbox worker thread: one QuickJS module, one run at a time, for as long as the pool keeps
// it. It retires (the pool replaces it) after any run that may have damaged its WASM memory.
import { parentPort, workerData } from 'node:worker_threads';
import type { SandboxJob, SandboxOutcome } from './job.js';
import { loadSandboxModule, runJob } from './sandbox.js';

export interface WorkerData {
  memoryLimitBytes: number;
}
export interface JobMessage {
  id: number;
  job: SandboxJob;
}
export interface OutcomeMessage {
  id: number;
  outcome: SandboxOutcome;
}

const port = parentPort;
if (!port) throw new Error('workflows/worker.ts runs as a worker thread only');

const quickjs = await loadSandboxModule((workerData as WorkerData).memoryLimitBytes);
port.on('message', ({ id, job }: JobMessage) => {
  port.postMessage({ id, outcome: runJob(quickjs, job) } satisfies OutcomeMessage);
});
port.postMessage('ready');
