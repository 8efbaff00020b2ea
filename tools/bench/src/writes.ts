/**
 * `npm run bench writes`: the write path on SQLite, with group commit (storage/sqlite-group-commit.ts)
 * off and on, side by side in one run: T1 creations and T6 runs of a trivial workflow per second,
 * beside P2 of the same server. Every write is durable before its answer either way
 * (synchronous=FULL); what changes is how many answers share one COMMIT's fsync.
 */
import autocannon from 'autocannon';
import { t6Requests } from './t6-requests.js';
import { printTable, type Row } from './report.js';
import { startChild, stopChild } from './server.js';
import { estimateOnCores, perRequest, threadCpu, type ThreadCpu } from './thread-cpu.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = 50;

/** Requests per second, and the server's CPU per request by thread (when /proc tells). */
async function perSecond(
  pid: number,
  options: autocannon.Options,
): Promise<{ perSecond: number; cpu: ThreadCpu | undefined }> {
  const before = threadCpu(pid);
  const result = await autocannon({ duration: DURATION_S, connections: CONNECTIONS, ...options });
  const after = threadCpu(pid);
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return {
    perSecond: result.requests.average,
    cpu: before && after ? perRequest(before, after, result.requests.total) : undefined,
  };
}

type Measured = Awaited<ReturnType<typeof perSecond>>;

interface WriteFigures {
  p2: number;
  t1: Measured;
  t6: Measured;
}

async function measure(root: string, groupCommit: boolean): Promise<WriteFigures> {
  const { child, info } = await startChild(root, 0, ['--workflows'], {
    SQLITE_GROUP_COMMIT: String(groupCommit),
    WORKFLOW_RUNS_PER_ENTERPRISE: '64',
  });
  try {
    const headers = { authorization: info.auth };
    const pid = child.pid!;
    const p2 = await perSecond(pid, {
      url: `${info.url}/services/rest/pals/expense-approval`,
      headers: { ...headers, accept: 'application/json' },
    });
    const t1 = await perSecond(pid, {
      url: `${info.url}/services/rest/transactions`,
      method: 'POST',
      body: 'palId=expense-approval',
      headers: {
        ...headers,
        accept: 'text/plain',
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    const t6 = await perSecond(pid, {
      url: info.url,
      headers: { ...headers, accept: 'application/json', 'content-type': 'application/json' },
      requests: t6Requests(info.workflowTransactions),
    });
    return { p2: p2.perSecond, t1, t6 };
  } finally {
    await stopChild(child);
  }
}

export async function runWriteBench(root: string): Promise<void> {
  const off = await measure(root, false);
  const on = await measure(root, true);
  const rows: Row[] = [
    {
      name: 'T1 createTransaction (req/s)',
      value: on.t1.perSecond,
      unit: 'req/s',
      baseline: off.t1.perSecond,
      target: `≥ 5,000 req/s (baseline: group commit off; P2 of the same server ${Math.round(on.p2)} req/s)`,
      met: on.t1.perSecond >= 5000,
    },
    {
      name: 'T6 trivial workflow (runs/s)',
      value: on.t6.perSecond,
      unit: 'runs/s',
      baseline: off.t6.perSecond,
      target: '≥ 3,000 runs/s (baseline: group commit off)',
      met: on.t6.perSecond >= 3000,
    },
    {
      name: 'P2 of the same server (req/s)',
      value: on.p2,
      unit: 'req/s',
      baseline: off.p2,
      target: '(reference: reads do not wait for writes they did not see)',
      met: true,
    },
  ];
  printTable(
    `Writes on SQLite, group commit on vs off: ${CONNECTIONS} connections, ${DURATION_S} s each, loopback, same cores`,
    rows,
  );
  printCpuTable([
    ['T1 createTransaction', on.t1.cpu, 5000],
    ['T6 trivial workflow', on.t6.cpu, 3000],
  ]);
}

/**
 * A request's CPU by thread (group commit on), and what it gives on more cores: the event loop
 * has a core of its own, the other threads share the rest, and the load generator runs elsewhere.
 */
export function printCpuTable(measures: [string, ThreadCpu | undefined, number][]): void {
  const rows: Row[] = [];
  for (const [name, cpu, target] of measures) {
    if (!cpu) continue;
    rows.push(
      {
        name: `${name}: CPU per request on the event loop`,
        value: cpu.main,
        unit: 'ms',
        target: `(reference: the event loop alone allows ${Math.round(1000 / cpu.main).toLocaleString('en-US')}/s)`,
        met: true,
      },
      {
        name: `${name}: CPU per request in worker threads / in libuv and V8 helpers`,
        value: cpu.workers,
        unit: `ms / ${cpu.other.toFixed(2)} ms`,
        target: '(reference)',
        met: true,
      },
    );
    for (const cores of [4, 8]) {
      const estimate = estimateOnCores(cpu, cores);
      rows.push({
        name: `${name}: estimated on ${cores} cores (load generator elsewhere)`,
        value: estimate,
        unit: '/s',
        target: `≥ ${target.toLocaleString('en-US')}/s`,
        met: estimate >= target,
      });
    }
  }
  if (rows.length > 0)
    printTable(
      "Where a request's CPU goes (SQLite, group commit on; /proc's per-thread counters over the measure), and an estimate for more cores",
      rows,
    );
}
