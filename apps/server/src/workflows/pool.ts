// The sandbox workers: a fixed number of threads, each running one job at a time, so a run never
// blocks the event loop. QuickJS's interrupt handler is polled only while bytecode runs (some
// builtins run for seconds without it), so every job also has a wall-clock backstop: a worker
// that has not answered by then is terminated and replaced, and its job fails as a timeout.
// Each worker's V8 heap is bounded (resourceLimits): one that outgrows it is ended by Node and
// replaced, and its job fails as WORKFLOW_MEMORY.
//
// Jobs belong to a tenant (an enterprise): at most `runsPerTenant` of one tenant's jobs hold a
// worker at once, so one tenant's slow runs cannot take every worker; the others wait in line,
// behind which any other tenant's job may pass. `admit` bounds what a tenant may have in
// progress at all (docs/workflows.md, "One enterprise cannot take every worker").
//
// A worker a tenant's run retired (its WASM memory grown or damaged, its heap outgrown, the
// backstop) is replaced at once, at that tenant's expense: until the replacement has loaded its
// sandbox (up to a second) it is the tenant's, in its share as if the run still held it, and the
// tenant's next job goes to it. Any job takes a worker that is ready before one still loading.
// Without this, a tenant whose every run retired its worker had its next job take the ready
// worker left, and another tenant's job wait for a new one to load.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { SandboxJob, SandboxOutcome } from './job.js';
import { breakdown, limitMessage } from './limits.js';
import type { JobMessage, OutcomeMessage, WorkerData, WorkerJob } from './worker.js';

export interface WorkerPoolOptions {
  size: number;
  memoryLimitBytes: number;
  /** How long past a job's own time limit the pool waits before it ends the worker. */
  backstopGraceMs: number;
  /** The V8 heap of each worker (maxOldGenerationSizeMb), beside its sandbox's WASM memory. */
  workerHeapMb: number;
  /** What each worker's sandbox keeps of pal versions' compiled modules; default: none. */
  codeCacheBytes?: number;
  /** Jobs of one tenant on workers at once; default: every worker. */
  runsPerTenant?: number;
  /** Runs of one tenant admitted beyond runsPerTenant, to wait in line; default: none. */
  queuePerTenant?: number;
  log: Logger;
  /** Starts a worker thread; tests give the pool workers they drive themselves. */
  startWorker?: (workerData: WorkerData, heapMb: number) => PoolWorker;
}

/** What the pool uses of a worker thread. */
export interface PoolWorker {
  readonly threadId: number;
  postMessage(message: JobMessage): void;
  terminate(): Promise<number>;
  unref(): void;
  on(event: 'message', listener: (message: OutcomeMessage | 'ready') => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
}

/** What one tenant has in this pool now. */
export interface TenantRuns {
  /** Runs admitted and not yet released (on a worker, in line, or between jobs). */
  admitted: number;
  /** Jobs on a worker. */
  running: number;
  /** Jobs in line for a worker. */
  waiting: number;
}

interface Pending {
  job: SandboxJob;
  tenant: string;
  resolve: (outcome: SandboxOutcome) => void;
  started: number;
}

interface Slot {
  worker: PoolWorker;
  ready: Promise<void>;
  /** Whether the worker has loaded its sandbox ('ready'): a job sent before waits for that. */
  started: boolean;
  /**
   * The tenant whose run retired the worker this one replaces, while it starts with no job on
   * it: only that tenant's job may take it, and takes it before any other worker. So it stays in
   * the tenant's share: the tenant's jobs on workers and such replacements never pass
   * runsPerTenant, as the run that retired the worker held a place in it.
   */
  restartOf?: string;
  current?: { id: number; pending: Pending; timer?: NodeJS.Timeout };
  /**
   * The pal versions (`codeKey`) the worker said it keeps compiled, with their files: its jobs of
   * them are sent without files (a structured clone of every file on the event loop, each run),
   * and it is the worker such a job goes to when it is free. Each answer names the versions it
   * dropped for room, so this is what the worker keeps, bounded by its WORKFLOW_CODE_CACHE_MB.
   */
  codeKeys: Set<string>;
}

// Built, the worker is JavaScript. From the sources (tests, tsx) it is TypeScript: a small
// bootstrap registers tsx's loader in the thread first (`--import` in a worker's execArgv is not
// honoured on every Node line).
const fromSources = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(fromSources ? './worker.ts' : './worker.js', import.meta.url);

/**
 * A worker's own stack. QuickJS bounds its recursion by the C stack inside its memory (512 KiB),
 * but some of it (JSON of deeply nested arrays, parsing deeply nested code) runs deeper on the
 * thread's own stack: at Node's 4 MB, V8's limit came first, which fails the sandbox and costs a
 * new worker; at 16 MB QuickJS's own stack overflow comes first, an error the run may catch.
 */
const WORKER_STACK_MB = 16;

function startWorker(workerData: WorkerData, heapMb: number): PoolWorker {
  const resourceLimits = { maxOldGenerationSizeMb: heapMb, stackSizeMb: WORKER_STACK_MB };
  if (!fromSources) return new Worker(WORKER_URL, { workerData, resourceLimits });
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(WORKER_URL.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData, resourceLimits });
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private readonly running = new Map<string, number>();
  private readonly admitted = new Map<string, number>();
  private readonly runsPerTenant: number;
  private readonly queuePerTenant: number;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {
    this.runsPerTenant = options.runsPerTenant ?? options.size;
    this.queuePerTenant = options.queuePerTenant ?? 0;
  }

  /**
   * Admits one run of the tenant (a run may make several jobs: repeats after a conflict), and
   * answers the function that ends it; undefined when the tenant already has runsPerTenant +
   * queuePerTenant runs in progress.
   */
  admit(tenant: string): (() => void) | undefined {
    const admitted = this.admitted.get(tenant) ?? 0;
    if (admitted >= this.runsPerTenant + this.queuePerTenant) return undefined;
    this.admitted.set(tenant, admitted + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      count(this.admitted, tenant, -1);
    };
  }

  runsOf(tenant: string): TenantRuns {
    return {
      admitted: this.admitted.get(tenant) ?? 0,
      running: this.running.get(tenant) ?? 0,
      waiting: this.queue.filter((pending) => pending.tenant === tenant).length,
    };
  }

  /** Runs a job on the next free worker. Never rejects: every failure is an outcome. */
  run(job: SandboxJob, tenant = ''): Promise<SandboxOutcome> {
    if (this.closed) return Promise.resolve(poolFailure('the workflow engine is shutting down', 0));
    return new Promise((resolve) => {
      this.queue.push({ job, tenant, resolve, started: performance.now() });
      this.dispatch();
    });
  }

  /** The thread ids of the workers, oldest first. */
  get workerIds(): number[] {
    return this.slots.map((slot) => slot.worker.threadId);
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
    for (;;) {
      // The oldest job that may take a worker now; the others keep their place in line.
      if (!this.slots.some((slot) => !slot.current) && this.slots.length >= this.options.size)
        return;
      let index = -1;
      let slot: Slot | undefined;
      while (!slot && ++index < this.queue.length) slot = this.slotFor(this.queue[index]!);
      if (!slot) return;
      const [pending] = this.queue.splice(index, 1) as [Pending];
      slot.restartOf = undefined;
      if (!this.slots.includes(slot)) this.slots.push(slot);
      count(this.running, pending.tenant, 1);
      const id = this.nextId++;
      const current: NonNullable<Slot['current']> = { id, pending };
      slot.current = current;
      slot.worker.postMessage({ id, job: jobFor(slot, pending.job) } satisfies JobMessage);
      // The backstop counts from when the worker can run the job: a worker started for it takes
      // a while to load its sandbox (most of a second from the sources), which is not the run's.
      void slot.ready.then(() => {
        if (slot.current === current)
          current.timer = setTimeout(
            () => this.abandon(slot, id),
            pending.job.timeoutMs + this.options.backstopGraceMs,
          );
      });
    }
  }

  /**
   * The worker the job may take now, if any: a replacement starting for a worker one of its
   * tenant's runs retired (the tenant waits for its own restart, in its share already); else,
   * while the tenant is below its share, a free worker that has loaded its sandbox, one that
   * keeps the version compiled if there is one; else a free one still starting that is no other
   * tenant's replacement; else a new one (not yet in `slots`).
   */
  private slotFor({ job, tenant }: Pending): Slot | undefined {
    const own = this.slots.find((slot) => slot.restartOf === tenant);
    if (own) return own;
    if ((this.running.get(tenant) ?? 0) >= this.runsPerTenant) return undefined;
    let ready: Slot | undefined;
    let starting: Slot | undefined;
    for (const slot of this.slots) {
      if (slot.current || slot.restartOf !== undefined) continue;
      if (!slot.started) starting ??= slot;
      else if (job.codeKey !== undefined && slot.codeKeys.has(job.codeKey)) return slot;
      else ready ??= slot;
    }
    if (ready ?? starting) return ready ?? starting;
    return this.slots.length < this.options.size ? this.spawn() : undefined;
  }

  private spawn(): Slot {
    const worker = (this.options.startWorker ?? startWorker)(
      {
        memoryLimitBytes: this.options.memoryLimitBytes,
        codeCacheBytes: this.options.codeCacheBytes ?? 0,
      },
      this.options.workerHeapMb,
    );
    worker.unref();
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const slot: Slot = { worker, ready, started: false, codeKeys: new Set() };
    worker.on('message', (message: OutcomeMessage | 'ready') => {
      if (message === 'ready') {
        slot.started = true;
        markReady();
        // A replacement no job of its tenant took is anyone's now.
        if (slot.restartOf !== undefined) {
          slot.restartOf = undefined;
          this.dispatch();
        }
        return;
      }
      if (slot.current?.id !== message.id) return;
      const { job, tenant } = slot.current.pending;
      for (const key of message.dropped) slot.codeKeys.delete(key);
      if (job.codeKey !== undefined) {
        if (message.keeps) slot.codeKeys.add(job.codeKey);
        else slot.codeKeys.delete(job.codeKey);
      }
      this.settle(slot, message.outcome);
      if (message.outcome.retire) this.replace(slot, tenant);
      this.dispatch();
    });
    worker.on('error', (error) => {
      this.options.log.error({ err: error }, 'a workflow worker failed');
      markReady();
      // A worker that cannot even start would fail again at once: answer what waits, retry later.
      if (!slot.started) this.failQueued(`the workflow sandbox could not start: ${error.message}`);
      this.fail(slot, error);
    });
    worker.on('exit', (code) => {
      markReady();
      if (slot.current) this.fail(slot, new Error(`the worker exited with code ${code}`));
      else {
        this.forget(slot);
        this.dispatch();
      }
    });
    return slot;
  }

  /** Answers the slot's current job and frees the slot (and its tenant's share). */
  private settle(slot: Slot, outcome: SandboxOutcome): void {
    const current = slot.current!;
    slot.current = undefined;
    clearTimeout(current.timer);
    count(this.running, current.pending.tenant, -1);
    current.pending.resolve(outcome);
  }

  /** The backstop: the worker did not answer in time. */
  private abandon(slot: Slot, id: number): void {
    const current = slot.current;
    if (!current || current.id !== id) return;
    const { job, started, tenant } = current.pending;
    this.options.log.warn(
      { timeoutMs: job.timeoutMs },
      'a workflow run passed its time limit without being interrupted: its worker is replaced',
    );
    this.settle(slot, {
      ok: false,
      type: 'WORKFLOW_TIMEOUT',
      message: limitMessage('WORKFLOW_TIMEOUT', job),
      frames: [],
      logs: [],
      durationMs: performance.now() - started,
    });
    this.replace(slot, tenant);
    this.dispatch();
  }

  private fail(slot: Slot, error: Error): void {
    const current = slot.current;
    // A worker that failed while it ran a job (its heap outgrown) was retired by that job's run;
    // one that failed to start, by nobody's.
    const retiredBy = slot.started ? current?.pending.tenant : undefined;
    if (current) {
      this.settle(slot, {
        ok: false,
        ...breakdown(current.pending.job, error.message),
        frames: [],
        logs: [],
        durationMs: performance.now() - current.pending.started,
      });
    }
    this.replace(slot, retiredBy);
    this.dispatch();
  }

  private failQueued(message: string): void {
    for (const pending of this.queue.splice(0))
      pending.resolve(poolFailure(message, performance.now() - pending.started));
  }

  /**
   * Ends the slot's worker. One a tenant's run retired is replaced at once, by a worker that is
   * that tenant's while it starts (see the top of this file); another is started when needed.
   */
  private replace(slot: Slot, retiredBy?: string): void {
    this.forget(slot);
    void slot.worker.terminate();
    if (retiredBy === undefined || this.closed) return;
    const next = this.spawn();
    next.restartOf = retiredBy;
    this.slots.push(next);
  }

  private forget(slot: Slot): void {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
  }
}

/** The job as sent to the slot's worker: without the files of a version it keeps. */
function jobFor(slot: Slot, job: SandboxJob): WorkerJob {
  return job.codeKey !== undefined && slot.codeKeys.has(job.codeKey)
    ? { ...job, files: undefined }
    : job;
}

/** Adds `by` to the tenant's count, forgetting tenants at zero. */
function count(counts: Map<string, number>, tenant: string, by: number): void {
  const next = (counts.get(tenant) ?? 0) + by;
  if (next > 0) counts.set(tenant, next);
  else counts.delete(tenant);
}

function poolFailure(message: string, durationMs: number): SandboxOutcome {
  return { ok: false, type: 'WORKFLOW_ERROR', message, frames: [], logs: [], durationMs };
}
