/**
 * `npm run bench workflows`: the workflow engine.
 * - sandbox overhead per run (module, call, the built state written back), in this process;
 * - T6 throughput with a trivial workflow, beside P2's throughput in the same run;
 * - entry tokens: T5 issue + redeem pairs per second, beside P2's throughput;
 * - P2 latency p99 while 4 runs loop until their time limit, beside P2's idle p99, in microseconds.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import {
  codeKeyOf,
  CONFIG_DEFAULTS,
  loadSandboxModule,
  Sandbox,
  TRANSACTION_EVENTS,
} from '@pal-workflow/server/bench';
import { t5Pairs } from './t5-pairs.js';
import { t6Requests } from './t6-requests.js';
import { printTable } from './report.js';
import { startChild } from './server.js';
import { perRequest, threadCpu } from './thread-cpu.js';
import { printCpuTable } from './writes.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = 50;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** The sandbox's trivial run: one module whose export returns what it was given. */
export const TRIVIAL_JOB = {
  files: {
    'workflows/console.js': 'export function runWorkflow(input) { return { n: input.n }; }',
  } as Record<string, string>,
  modules: { console: 'workflows/console.js' },
  module: 'console',
  exportName: 'runWorkflow',
  inputJson: '{"n":1}',
  vars: {},
  moves: { complete: TRANSACTION_EVENTS.complete, cancel: TRANSACTION_EVENTS.cancel },
  timeoutMs: 1000,
  memoryBytes: 64 * 1024 * 1024,
  maxResultLength: 1 << 20,
};

/** 20 KB of module: 150 small functions, each with a closure and a string of its own. */
const MODULE_20_KB =
  Array.from(
    { length: 150 },
    (_, i) =>
      `export function f${i}(a, b) { const x = [a, b, ${i}].map((v) => v * 2 + ${i}); return x.reduce((s, v) => s + v, 0) + 'f${i}'; }`,
  ).join('\n') + '\nexport function runWorkflow(input) { return { n: input.n }; }\n';

const CODE_CACHE_BYTES = CONFIG_DEFAULTS.WORKFLOW_CODE_CACHE_MB * 1024 * 1024;

interface RunTimes {
  p50: number;
  p99: number;
  restoreP50: number;
}

/**
 * `count` runs of `files` in one sandbox, the first tenth not counted: with the code key the
 * engine gives every job (the version's modules kept compiled), or without (each run compiles
 * what it imports, as every run did before).
 */
async function sandboxRuns(
  files: Record<string, string>,
  keyed: boolean,
  count: number,
): Promise<RunTimes> {
  const sandbox = await Sandbox.create(TRIVIAL_JOB.memoryBytes, CODE_CACHE_BYTES);
  const job = { ...TRIVIAL_JOB, files, ...(keyed ? { codeKey: codeKeyOf('bench', files) } : {}) };
  const runs: number[] = [];
  const restores: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const outcome = sandbox.runJob(job);
    const ran = performance.now();
    sandbox.restore();
    if (!outcome.ok) throw new Error(outcome.message);
    if (i >= count / 10) {
      runs.push(performance.now() - started);
      restores.push(performance.now() - ran);
    }
  }
  return {
    p50: percentile(runs, 50),
    p99: percentile(runs, 99),
    restoreP50: percentile(restores, 50),
  };
}

async function sandboxOverhead(): Promise<{
  trivial: RunTimes;
  trivialCompiled: RunTimes;
  large: RunTimes;
  largeCompiled: RunTimes;
  contextP50: number;
}> {
  const trivial = await sandboxRuns(TRIVIAL_JOB.files, true, 5000);
  const trivialCompiled = await sandboxRuns(TRIVIAL_JOB.files, false, 5000);
  const large = await sandboxRuns({ [TRIVIAL_JOB.modules.console]: MODULE_20_KB }, true, 2000);
  const largeCompiled = await sandboxRuns(
    { [TRIVIAL_JOB.modules.console]: MODULE_20_KB },
    false,
    2000,
  );
  // The baseline: what every run paid before the built state, an empty runtime and context made
  // and disposed.
  const quickjs = await loadSandboxModule(TRIVIAL_JOB.memoryBytes);
  const contexts: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const started = performance.now();
    const runtime = quickjs.newRuntime();
    runtime.newContext().dispose();
    runtime.dispose();
    if (i >= 500) contexts.push(performance.now() - started);
  }
  return {
    trivial,
    trivialCompiled,
    large,
    largeCompiled,
    contextP50: percentile(contexts, 50),
  };
}

async function load(options: autocannon.Options) {
  const result = await autocannon({ duration: DURATION_S, ...options });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

/**
 * P2's latency p99 in microseconds and its requests per second, from `connections` loops of one
 * request at a time. autocannon keeps latencies in a histogram of whole milliseconds, which
 * rounds an idle p99 under 1 ms to 0 or 1 and so cannot judge "≤ 2 × idle". One connection: with
 * more, the fetch client in this process queues requests and its own delay swamps the server's.
 */
async function probeLatency(
  url: string,
  headers: Record<string, string>,
  connections: number,
): Promise<{ p99Us: number; perSecond: number }> {
  const latenciesUs: number[] = [];
  const started = performance.now();
  const until = started + DURATION_S * 1000;
  const loop = async () => {
    while (performance.now() < until) {
      const sent = performance.now();
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
      latenciesUs.push((performance.now() - sent) * 1000);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return {
    p99Us: percentile(latenciesUs, 99),
    perSecond: latenciesUs.length / ((performance.now() - started) / 1000),
  };
}

export async function runWorkflowBench(root: string): Promise<void> {
  const overhead = await sandboxOverhead();
  printTable(
    "Sandbox overhead per run: module, call, the state written back (5,000 runs, one thread; the version's modules kept compiled, as the service runs)",
    [
      {
        name: 'run p50',
        value: overhead.trivial.p50,
        unit: 'ms',
        baseline: overhead.contextP50,
        target: '≤ 0.2 ms (baseline: an empty runtime + context, made and disposed)',
        met: overhead.trivial.p50 <= 0.2,
      },
      {
        name: 'run p99',
        value: overhead.trivial.p99,
        unit: 'ms',
        target: '(reference)',
        met: true,
      },
      {
        name: '… of which the write-back p50',
        value: overhead.trivial.restoreP50,
        unit: 'ms',
        target: '(reference)',
        met: true,
      },
      {
        name: 'run p50, the module compiled by each run (no code key)',
        value: overhead.trivialCompiled.p50,
        unit: 'ms',
        target: '(reference)',
        met: true,
      },
      {
        name: 'a 20 KB module: run p50, kept compiled',
        value: overhead.large.p50,
        unit: 'ms',
        baseline: overhead.largeCompiled.p50,
        target: '(reference; baseline: compiled by each run)',
        met: true,
      },
    ],
  );

  // One enterprise drives every run here: its cap on workers (by default half of them) would
  // leave the other half idle, and the looping runs below would take turns instead of all
  // looping at once. The cap lifted, the figures measure what they measured before it existed.
  const { child, info } = await startChild(root, 0, ['--workflows'], {
    WORKFLOW_RUNS_PER_ENTERPRISE: String(availableParallelism()),
  });
  try {
    const headers = { authorization: info.auth, accept: 'application/json' };
    const p2 = await load({
      url: `${info.url}/services/rest/pals/expense-approval`,
      connections: CONNECTIONS,
      headers,
    });
    const t6 = await load({
      url: info.url,
      connections: CONNECTIONS,
      headers: { ...headers, 'content-type': 'application/json' },
      requests: t6Requests(info.workflowTransactions),
    });
    printTable(
      `T6 with a trivial workflow: ${CONNECTIONS} connections, ${DURATION_S} s, loopback, same cores`,
      [
        {
          name: 'T6 runTransactionWorkflow (runs/s)',
          value: t6.requests.average,
          unit: 'runs/s',
          baseline: p2.requests.average,
          target: '≥ 3,000 runs/s (baseline: P2 JSON, req/s)',
          met: t6.requests.average >= 3000,
        },
        {
          name: 'T6 latency p99',
          value: t6.latency.p99,
          unit: 'ms',
          target: '(reference)',
          met: true,
        },
      ],
    );

    // Entry tokens: T5 issued over the API, redeemed over HTTP, 50 at a time.
    const cpuBefore = threadCpu(child.pid!);
    const { pairs, seconds } = await t5Pairs(
      { url: info.url, auth: info.auth, sso: info.sso, transactions: info.workflowTransactions },
      CONNECTIONS,
      DURATION_S,
    );
    const pairsPerSecond = pairs / seconds;
    const cpuAfter = threadCpu(child.pid!);
    printTable(`Entry tokens: T5 issue + redeem, ${CONNECTIONS} at a time, ${DURATION_S} s`, [
      {
        name: 'T5 issue + GET /enter (pairs/s)',
        value: pairsPerSecond,
        unit: 'pairs/s',
        baseline: p2.requests.average,
        target: '≥ 5,000 pairs/s (baseline: P2 JSON, req/s)',
        met: pairsPerSecond >= 5000,
      },
    ]);
    printCpuTable([
      [
        'T5 issue + GET /enter (a pair)',
        cpuBefore && cpuAfter ? perRequest(cpuBefore, cpuAfter, pairs) : undefined,
        5000,
      ],
    ]);

    const probe = () => probeLatency(`${info.url}/services/rest/pals/expense-approval`, headers, 1);
    const idle = await probe();
    let looping = true;
    const loopRun = async (): Promise<number> => {
      let runs = 0;
      while (looping) {
        const response = await fetch(
          `${info.url}/services/rest/console/bench-workflow/runWorkflow`,
          {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: '{}',
          },
        );
        const result = (await response.json()) as { messages?: { type?: string }[] };
        if (result.messages?.[0]?.type !== 'WORKFLOW_TIMEOUT')
          throw new Error('the loop did not time out');
        runs++;
      }
      return runs;
    };
    const loops = Array.from({ length: 4 }, loopRun);
    const busy = await probe();
    looping = false;
    const timedOut = (await Promise.all(loops)).reduce((a, b) => a + b, 0);
    printTable(
      `P2 latency, one request at a time, while 4 runs loop until their limit (${timedOut} timed-out runs during the measure)`,
      [
        {
          name: 'P2 p99 with 4 looping runs',
          value: busy.p99Us,
          unit: 'µs',
          baseline: idle.p99Us,
          target: '≤ 2 × idle p99',
          met: busy.p99Us <= 2 * idle.p99Us,
        },
        {
          name: 'P2 throughput with 4 looping runs',
          value: busy.perSecond,
          unit: 'req/s',
          baseline: idle.perSecond,
          target: '(reference)',
          met: true,
        },
      ],
    );
  } finally {
    child.kill('SIGTERM');
  }
}
