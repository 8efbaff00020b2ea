// The worker pool on its own (real worker threads, no server): a worker's V8 heap is bounded by
// its resourceLimits, and a tenant's jobs take at most their share of the workers. Which worker a
// job goes to, with workers the test drives (loads their sandbox, answers) in their place.
import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxJob } from '../../test/workflow-runs.js';
import { codeKeyOf, type SandboxJob, type SandboxOutcome } from './job.js';
import { WorkerPool, type PoolWorker, type WorkerPoolOptions } from './pool.js';
import type { JobMessage, OutcomeMessage } from './worker.js';

const MiB = 1024 * 1024;
/** A job of its own export `run`, with a time limit that leaves a loaded machine room. */
const job = (source: string, over: Partial<SandboxJob> = {}) =>
  sandboxJob(source, { timeoutMs: 2000, ...over });

let pool: WorkerPool | undefined;
afterEach(() => pool?.close());

function startPool(over: Partial<WorkerPoolOptions> = {}): WorkerPool {
  pool = new WorkerPool({
    size: 2,
    memoryLimitBytes: 64 * MiB,
    backstopGraceMs: 500,
    workerHeapMb: 256,
    runsPerTenant: 2,
    queuePerTenant: 10,
    log: pino({ level: 'silent' }),
    ...over,
  });
  return pool;
}

describe('the worker pool', () => {
  it("bounds a worker's heap: a job too large for it fails as WORKFLOW_MEMORY, and the next one runs", async () => {
    const pool = startPool({ size: 1, workerHeapMb: 32 });
    // 80 MB of files: the worker's heap cannot take them in (were they taken in, a run would
    // compile them all, and fail on the first that is no module).
    const files: Record<string, string> = { 'workflows/tx.js': 'export const run = () => 1;' };
    for (let i = 0; i < 2000; i++) files[`data/${i}.txt`] = String(i).padEnd(40_000, 'x');
    const big = await pool.run(job('', { files }), 'acme');
    expect(big.ok).toBe(false);
    expect(!big.ok && big.type).toBe('WORKFLOW_MEMORY');
    const next = await pool.run(job('export const run = () => 2;'), 'acme');
    expect(next.ok && next.value).toBe('2');
  });

  it('replaces a worker whose run grew its WASM memory, even when the run succeeded', async () => {
    const pool = startPool({ size: 1, memoryLimitBytes: 256 * MiB });
    const first = await pool.run(job('export const run = () => 1;', { memoryBytes: 256 * MiB }));
    expect(first.ok).toBe(true);
    const [before] = pool.workerIds;
    const grown = await pool.run(
      job(
        'export function run() { const b = []; for (let i = 0; i < 5; i++) b.push(new Uint8Array(16 << 20)); return b.length; }',
        { memoryBytes: 256 * MiB },
      ),
    );
    expect(grown).toMatchObject({ ok: true, value: '5', retire: true });
    const next = await pool.run(job('export const run = () => 2;', { memoryBytes: 256 * MiB }));
    expect(next.ok && next.value).toBe('2');
    expect(pool.workerIds).toHaveLength(1);
    expect(pool.workerIds[0]).not.toBe(before);
  });

  it("gives a worker a stack on which QuickJS's own limit comes before the thread's", async () => {
    const pool = startPool({ size: 1 });
    const outcome = await pool.run(
      job(
        'export function run() { return (0, eval)("(".repeat(100000) + "1" + ")".repeat(100000)); }',
      ),
    );
    expect(outcome).toMatchObject({ ok: false, type: 'WORKFLOW_ERROR' });
    expect(!outcome.ok && outcome.message).toMatch(/stack overflow/);
    expect(outcome.retire).toBeFalsy();
  });

  it('counts the backstop from when a worker is ready: a job that starts a worker keeps its whole time', async () => {
    // A worker from the sources takes most of a second to start; the job then runs 1.2 s of its
    // 1.5 s, with a backstop grace of 1 ms: counted from the dispatch, the backstop would end it.
    const pool = startPool({ size: 1, backstopGraceMs: 1 });
    const outcome = await pool.run(
      job(
        'export function run() { const end = Date.now() + 1200; while (Date.now() < end) {} return 1; }',
        {
          timeoutMs: 1500,
        },
      ),
    );
    expect(outcome.ok && outcome.value).toBe('1');
  });

  it("runs at most runsPerTenant of a tenant's jobs at once; other tenants' jobs take the rest", async () => {
    const pool = startPool({ size: 2, runsPerTenant: 1 });
    await pool.warm();
    const order: string[] = [];
    const slow = job('export function run() { for (;;) {} }', { timeoutMs: 3000 });
    const quick = job('export const run = () => "quick";');
    const runs = [
      pool.run(slow, 'a').then(() => order.push('a1')),
      pool.run(slow, 'a').then(() => order.push('a2')),
      pool.run(quick, 'b').then(() => order.push('b1')),
      pool.run(quick, 'b').then(() => order.push('b2')),
    ];
    expect(pool.runsOf('a')).toEqual({ admitted: 0, running: 1, waiting: 1 });
    await Promise.all(runs);
    expect(order).toEqual(['b1', 'b2', 'a1', 'a2']);
  });

  it('admits runsPerTenant + queuePerTenant runs of a tenant; the next is refused until one ends', () => {
    const pool = startPool({ runsPerTenant: 1, queuePerTenant: 1 });
    const first = pool.admit('a');
    const second = pool.admit('a');
    expect([typeof first, typeof second]).toEqual(['function', 'function']);
    expect(pool.admit('a')).toBeUndefined();
    expect(pool.admit('b')).toBeTypeOf('function');
    first!();
    first!(); // a second release gives nothing back twice
    expect(pool.admit('a')).toBeTypeOf('function');
    expect(pool.admit('a')).toBeUndefined();
  });

  describe("a pal version's files", () => {
    const version = (word: string) => {
      const files = { 'workflows/tx.js': `export const run = () => '${word}';` };
      return job('', { files, codeKey: codeKeyOf('e', files) });
    };
    /** The version's job with no files: only a worker that keeps the version can run it. */
    const withoutFiles = (j: SandboxJob): SandboxJob => ({ ...j, files: {} });

    it('goes to a worker once: its later jobs there carry none, and go to that worker', async () => {
      const pool = startPool({ codeCacheBytes: 32 * MiB });
      await pool.warm();
      const [a, b] = [version('a'), version('b')];
      // At once: one worker each.
      expect(await Promise.all([pool.run(a), pool.run(b)])).toMatchObject([
        { ok: true, value: '"a"' },
        { ok: true, value: '"b"' },
      ]);
      for (const j of [b, a, b])
        expect(await pool.run(withoutFiles(j))).toMatchObject({
          ok: true,
          value: `"${j === a ? 'a' : 'b'}"`,
        });
    });

    it('goes whole to a worker that dropped the version for room, and first to one that keeps it', async () => {
      // Room for one version's state (the built state, some 192 KiB, and the module).
      const pool = startPool({ codeCacheBytes: 300 * 1024 });
      await pool.warm();
      const [a, c] = [version('a'), version('c')];
      expect(await Promise.all([pool.run(a), pool.run(a)])).toMatchObject([
        { ok: true, value: '"a"' },
        { ok: true, value: '"a"' },
      ]);
      // The first free worker takes c, and drops a for it: a's jobs go to the other.
      expect(await pool.run(c)).toMatchObject({ ok: true, value: '"c"' });
      for (const j of [withoutFiles(a), withoutFiles(c), withoutFiles(a)])
        expect(await pool.run(j)).toMatchObject({
          ok: true,
          value: j.codeKey === a.codeKey ? '"a"' : '"c"',
        });
      // One worker: a, then b in its place, then a again with its files.
      await pool.close();
      const one = startPool({ size: 1, codeCacheBytes: 300 * 1024 });
      const b = version('b');
      for (const j of [a, b, a, withoutFiles(a)])
        expect(await one.run(j)).toMatchObject({
          ok: true,
          value: j.codeKey === a.codeKey ? '"a"' : '"b"',
        });
    });
  });
});

/** A worker thread in name only: it loads its sandbox and answers when the test says. */
class FakeWorker extends EventEmitter implements PoolWorker {
  private static threads = 0;
  readonly threadId = ++FakeWorker.threads;
  readonly jobs: JobMessage[] = [];
  terminated = false;

  postMessage(message: JobMessage): void {
    this.jobs.push(message);
  }
  terminate(): Promise<number> {
    this.terminated = true;
    setImmediate(() => this.emit('exit', 1));
    return Promise.resolve(1);
  }
  unref(): void {}

  /** The names of the jobs it was given (`named`), in order. */
  get names(): string[] {
    return this.jobs.map((message) => JSON.parse(message.job.inputJson) as string);
  }
  /** Has loaded its sandbox. */
  start(): void {
    this.emit('message', 'ready');
  }
  /** Answers its latest job. */
  answer(outcome: SandboxOutcome): void {
    const { id } = this.jobs.at(-1)!;
    this.emit('message', { id, outcome, keeps: false, dropped: [] } satisfies OutcomeMessage);
  }
}

describe('which worker a job goes to', () => {
  let workers: FakeWorker[];
  /** A pool of fake workers; `warm` ones have loaded their sandbox. */
  async function fakePool(warm: boolean, over: Partial<WorkerPoolOptions> = {}) {
    workers = [];
    const pool = startPool({
      startWorker: () => {
        const worker = new FakeWorker();
        workers.push(worker);
        return worker;
      },
      ...over,
    });
    const warmed = pool.warm();
    if (warm) {
      for (const worker of workers) worker.start();
      await warmed;
    }
    return pool;
  }
  /** A job known by its input. */
  const named = (name: string, over: Partial<SandboxJob> = {}) =>
    job('export const run = () => 1;', { inputJson: JSON.stringify(name), ...over });
  const done: SandboxOutcome = {
    ok: true,
    value: '1',
    effects: { vars: {}, moves: [], roles: [], mails: [], fields: [], clearedSignatures: [] },
    logs: [],
    durationMs: 1,
  };

  // The ways a run retires its worker: its outcome says so (WASM memory grown or damaged), its
  // worker's heap overflows (Node ends the worker), or the backstop ends it.
  const retirements: [string, 'WORKFLOW_MEMORY' | 'WORKFLOW_TIMEOUT', (w: FakeWorker) => void][] = [
    [
      'its outcome retires the worker',
      'WORKFLOW_MEMORY',
      (worker) =>
        worker.answer({
          ok: false,
          type: 'WORKFLOW_MEMORY',
          message: 'out of memory',
          frames: [],
          logs: [],
          durationMs: 1,
          retire: true,
        }),
    ],
    [
      "it overflows its worker's heap",
      'WORKFLOW_MEMORY',
      (worker) =>
        worker.emit(
          'error',
          Object.assign(new Error('Worker terminated due to reaching memory limit'), {
            code: 'ERR_WORKER_OUT_OF_MEMORY',
          }),
        ),
    ],
    ['the backstop ends it', 'WORKFLOW_TIMEOUT', () => {}],
  ];

  it.each(retirements)(
    "a worker a tenant's run retired is replaced at that tenant's expense (%s): another tenant's job takes the ready worker",
    async (_, type, retire) => {
      // With a backstop 2 ms after the job's start (the last case never answers).
      const pool = await fakePool(true, { size: 2, runsPerTenant: 1, backstopGraceMs: 1 });
      const [first, second] = workers as [FakeWorker, FakeWorker];
      const over = { timeoutMs: 1 };
      const a1 = pool.run(named('a1', over), 'a');
      const a2 = pool.run(named('a2', over), 'a');
      expect([first.names, second.names]).toEqual([['a1'], []]);

      retire(first);
      expect(await a1).toMatchObject({ ok: false, type });
      expect(first.terminated).toBe(true);
      // B's job, come meanwhile, takes the worker that is ready, and is answered before any
      // worker has loaded a sandbox: A's next job does not take that worker...
      const b1 = pool.run(named('b1'), 'b');
      expect(second.names).toEqual(['b1']);
      second.answer(done);
      expect(await b1).toMatchObject({ ok: true });
      // ...it waits for the one that replaces the worker A's run retired, in A's share.
      expect(workers).toHaveLength(3);
      const replacement = workers[2]!;
      expect(replacement.names).toEqual(['a2']);
      expect(pool.runsOf('a')).toEqual({ admitted: 0, running: 1, waiting: 0 });

      replacement.start();
      replacement.answer(done);
      expect(await a2).toMatchObject({ ok: true });
      expect(pool.workerIds).toEqual([second.threadId, replacement.threadId]);
      expect(pool.runsOf('a')).toEqual({ admitted: 0, running: 0, waiting: 0 });
    },
  );

  it("keeps a tenant's replacement for its jobs until it has loaded; then it is anyone's", async () => {
    const pool = await fakePool(true, { size: 2, runsPerTenant: 1 });
    const [first, second] = workers as [FakeWorker, FakeWorker];
    const a1 = pool.run(named('a1'), 'a');
    void pool.run(named('b1'), 'b');
    retirements[0]![2](first);
    await a1;
    const replacement = workers[2]!;
    // C's job does not take A's replacement: A's next job may come while it loads.
    const c1 = pool.run(named('c1'), 'c');
    expect(pool.runsOf('c')).toEqual({ admitted: 0, running: 0, waiting: 1 });
    expect(replacement.names).toEqual([]);
    replacement.start();
    expect(replacement.names).toEqual(['c1']);
    replacement.answer(done);
    expect(await c1).toMatchObject({ ok: true });
    expect(second.names).toEqual(['b1']);
  });

  it('prefers a worker that has loaded its sandbox to one still loading', async () => {
    const pool = await fakePool(false, { size: 2 });
    const [first, second] = workers as [FakeWorker, FakeWorker];
    second.start();
    void pool.run(named('a1'), 'a');
    expect([first.names, second.names]).toEqual([[], ['a1']]);
  });
});
