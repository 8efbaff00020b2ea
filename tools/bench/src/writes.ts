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

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = 50;

async function perSecond(options: autocannon.Options): Promise<number> {
  const result = await autocannon({ duration: DURATION_S, connections: CONNECTIONS, ...options });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

interface WriteFigures {
  p2: number;
  t1: number;
  t6: number;
}

async function measure(root: string, groupCommit: boolean): Promise<WriteFigures> {
  const { child, info } = await startChild(root, 0, ['--workflows'], {
    SQLITE_GROUP_COMMIT: String(groupCommit),
    WORKFLOW_RUNS_PER_ENTERPRISE: '64',
  });
  try {
    const headers = { authorization: info.auth };
    const p2 = await perSecond({
      url: `${info.url}/services/rest/pals/expense-approval`,
      headers: { ...headers, accept: 'application/json' },
    });
    const t1 = await perSecond({
      url: `${info.url}/services/rest/transactions`,
      method: 'POST',
      body: 'palId=expense-approval',
      headers: {
        ...headers,
        accept: 'text/plain',
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    const t6 = await perSecond({
      url: info.url,
      headers: { ...headers, accept: 'application/json', 'content-type': 'application/json' },
      requests: t6Requests(info.workflowTransactions),
    });
    return { p2, t1, t6 };
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
      value: on.t1,
      unit: 'req/s',
      baseline: off.t1,
      target: `≥ 5,000 req/s (baseline: group commit off; P2 of the same server ${Math.round(on.p2)} req/s)`,
      met: on.t1 >= 5000,
    },
    {
      name: 'T6 trivial workflow (runs/s)',
      value: on.t6,
      unit: 'runs/s',
      baseline: off.t6,
      target: '≥ 3,000 runs/s (baseline: group commit off)',
      met: on.t6 >= 3000,
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
}
