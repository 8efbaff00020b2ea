// The sandbox workers: a fixed number of threads, each running one job at a time, so a run never
// blocks the event loop. QuickJS's interrupt handler is polled only while bytecode runs (some
// builtins run for seconds without it), so every job also has a wall-clock backstop: a worker
// that has not answered by then is terminated and replaced, and its job fails as a timeout.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { SandboxJob, SandboxOutcome } from './job.js';
import type { JobMessage, OutcomeMessage, WorkerData } from './worker.js';

export interface WorkerPoolOptions {
  size: number;
  memoryLimitBytes: number;
  /** How long past a job's own time limit the pool waits before it ends the worker. */
  backstopGraceMs: number;
  log: Logger;
}

interface Pending {
  job: SandboxJob;
  resolve: (outcome: SandboxOutcome) => void;
  started: number;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  current?: { id: number; pending: Pending; timer: NodeJS.Timeout };
}

// Built, the worker is JavaScript. From the sources (tests, tsx) it is TypeScript: a small
// bootstrap registers tsx's loader in the thread first (`--import` in a worker's execArgv is not
// honoured on every Node line).
const fromSources = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(fromSources ? './worker.ts' : './worker.js', import.meta.url);

function startWorker(workerData: WorkerData): Worker {
  if (!fromSources) return new Worker(WORKER_URL, { workerData });
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(WORKER_URL.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {}

  /** Runs a job on the next free worker. Never rejects: every failure is an outcome. */
  run(job: SandboxJob): Promise<SandboxOutcome> {
    if (this.closed) return Promise.resolve(poolFailure('the workflow engine is shutting down', 0));
    return new Promise((resolve) => {
      this.queue.push({ job, resolve, started: performance.now() });
      this.dispatch();
    });
  }

  /** Starts the workers now rather than at the first run. */
  async warm(): Promise<void> {
    while (this.slots.length < this.options.size) this.slots.push(this.spawn());
    await Promise.all(this.slots.map((slot) => slot.ready));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0))
      pending.resolve(poolFailure('the workflow engine is shutting down', 0));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.current);
      if (!slot) {
        if (this.slots.length >= this.options.size) return;
        slot = this.spawn();
        this.slots.push(slot);
      }
      const pending = this.queue.shift()!;
      const id = this.nextId++;
      const timer = setTimeout(
        () => this.abandon(slot, id),
        pending.job.timeoutMs + this.options.backstopGraceMs,
      );
      slot.current = { id, pending, timer };
      slot.worker.postMessage({ id, job: pending.job } satisfies JobMessage);
    }
  }

  private spawn(): Slot {
    const worker = startWorker({ memoryLimitBytes: this.options.memoryLimitBytes });
    worker.unref();
    let started = false;
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const slot: Slot = { worker, ready };
    worker.on('message', (message: OutcomeMessage | 'ready') => {
      if (message === 'ready') {
        started = true;
        return markReady();
      }
      const current = slot.current;
      if (!current || current.id !== message.id) return;
      clearTimeout(current.timer);
      slot.current = undefined;
      current.pending.resolve(message.outcome);
      if (!message.outcome.ok && message.outcome.retire) this.replace(slot);
      this.dispatch();
    });
    worker.on('error', (error) => {
      this.options.log.error({ err: error }, 'a workflow worker failed');
      markReady();
      // A worker that cannot even start would fail again at once: answer what waits, retry later.
      if (!started) this.failQueued(`the workflow sandbox could not start: ${error.message}`);
      this.fail(slot, error);
    });
    worker.on('exit', (code) => {
      markReady();
      if (slot.current) this.fail(slot, new Error(`the worker exited with code ${code}`));
      else this.forget(slot);
    });
    return slot;
  }

  /** The backstop: the worker did not answer in time. */
  private abandon(slot: Slot, id: number): void {
    const current = slot.current;
    if (!current || current.id !== id) return;
    slot.current = undefined;
    this.options.log.warn(
      { timeoutMs: current.pending.job.timeoutMs },
      'a workflow run passed its time limit without being interrupted: its worker is replaced',
    );
    current.pending.resolve({
      ok: false,
      type: 'WORKFLOW_TIMEOUT',
      message: `the workflow ran longer than ${current.pending.job.timeoutMs} ms`,
      frames: [],
      logs: [],
      durationMs: performance.now() - current.pending.started,
    });
    this.replace(slot);
    this.dispatch();
  }

  private fail(slot: Slot, error: Error): void {
    const current = slot.current;
    slot.current = undefined;
    if (current) {
      clearTimeout(current.timer);
      const memory = /memory/i.test(error.message);
      current.pending.resolve({
        ok: false,
        type: memory ? 'WORKFLOW_MEMORY' : 'WORKFLOW_ERROR',
        message: memory
          ? `the workflow used more than ${current.pending.job.memoryBytes / 1048576} MB of memory`
          : `the sandbox failed: ${error.message}`,
        frames: [],
        logs: [],
        durationMs: performance.now() - current.pending.started,
      });
    }
    this.replace(slot);
    this.dispatch();
  }

  private failQueued(message: string): void {
    for (const pending of this.queue.splice(0))
      pending.resolve(poolFailure(message, performance.now() - pending.started));
  }

  private replace(slot: Slot): void {
    this.forget(slot);
    void slot.worker.terminate();
  }

  private forget(slot: Slot): void {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
  }
}

function poolFailure(message: string, durationMs: number): SandboxOutcome {
  return { ok: false, type: 'WORKFLOW_ERROR', message, frames: [], logs: [], durationMs };
}
