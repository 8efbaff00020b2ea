/**
 * `npm run bench server`: P1 and P2 throughput of the real service (authenticated, as a real
 * client is) against a bare Fastify route returning the same bytes without authentication, in the
 * same run; and T2 "name contains" latency over 1,000,000 seeded transactions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { printTable, type Row } from './report.js';

export interface Started {
  url: string;
  baselineUrl: string;
  auth: string;
  transactions: number;
  nouns: string[];
  workflowTransactions: string[];
  sso: string;
}

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = 50;

export async function startChild(
  root: string,
  transactions: number,
  extra: string[] = [],
): Promise<{ child: ChildProcess; info: Started }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=@pal-workflow/source',
      join(root, 'tools/bench/src/bench-server.ts'),
      '--transactions',
      String(transactions),
      ...extra,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const info = await new Promise<Started>((resolvePromise, reject) => {
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    lines.once('line', (line) => resolvePromise(JSON.parse(line) as Started));
  });
  return { child, info };
}

async function throughput(url: string, headers: Record<string, string>): Promise<number> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

export async function runServerBench(root: string): Promise<void> {
  const { child, info } = await startChild(root, 0);
  const rows: Row[] = [];
  try {
    for (const [name, path, key, accept, targetShare] of [
      [
        'P2 getPal, JSON',
        '/services/rest/pals/expense-approval',
        'p2-json',
        'application/json',
        0.6,
      ],
      ['P2 getPal, XML', '/services/rest/pals/expense-approval', 'p2-xml', 'application/xml', 0.5],
      ['P1 searchPals, JSON', '/services/rest/pals', 'p1-json', 'application/json', 0.6],
      ['P1 searchPals, XML', '/services/rest/pals', 'p1-xml', 'application/xml', 0.5],
    ] as const) {
      const base = await throughput(`${info.baselineUrl}/${key}`, { accept });
      const real = await throughput(`${info.url}${path}`, { accept, authorization: info.auth });
      rows.push({
        name: `${name} (req/s)`,
        value: real,
        unit: 'req/s',
        baseline: base,
        target: `≥ ${targetShare * 100} % of baseline (${Math.round((real / base) * 100)} %)`,
        met: real >= base * targetShare,
      });
    }
  } finally {
    child.kill('SIGTERM');
  }
  printTable(
    `P1/P2 throughput: ${CONNECTIONS} connections, ${DURATION_S} s each, loopback, server and load on the same cores`,
    rows,
  );

  const size = Number(process.env.BENCH_TRANSACTIONS ?? 1_000_000);
  const seedStart = performance.now();
  const seeded = await startChild(root, size);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  try {
    const terms = [
      ...seeded.info.nouns.slice(0, 10),
      'urgent inv',
      'report 4711',
      '12345',
      'nomatch',
      'ly tr',
    ];
    const samples: { term: string; ms: number }[] = [];
    const totals = new Map<string, number>();
    for (let round = 0; round < 25; round++) {
      for (const term of terms) {
        const started = performance.now();
        const response = await fetch(`${seeded.info.url}/services/rest/transactions`, {
          headers: { authorization: seeded.info.auth, accept: 'application/json', name: term },
        });
        await response.arrayBuffer();
        const ms = performance.now() - started;
        if (response.status !== 200) throw new Error(`T2 answered ${response.status}`);
        if (round > 0) samples.push({ term, ms }); // the first round warms the caches
        totals.set(term, Number(response.headers.get('x-total-count')));
      }
    }
    const percentile = (values: number[], p: number) => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
    };
    const all = samples.map((s) => s.ms);
    const selective = samples.filter((s) => totals.get(s.term)! < 1000).map((s) => s.ms);
    const broad = samples.filter((s) => totals.get(s.term)! >= 1000).map((s) => s.ms);
    printTable(
      `T2 name-contains search over ${size.toLocaleString('en-US')} transactions (seeded in ${seedSeconds.toFixed(1)} s); ${all.length} requests, one at a time`,
      [
        {
          name: 'T2 latency p50, all terms',
          value: percentile(all, 50),
          unit: 'ms',
          target: '(reference)',
          met: true,
        },
        {
          name: 'T2 latency p99, all terms',
          value: percentile(all, 99),
          unit: 'ms',
          target: '≤ 20 ms',
          met: percentile(all, 99) <= 20,
        },
        {
          name: 'T2 latency p99, selective terms (< 1,000 matches)',
          value: percentile(selective, 99),
          unit: 'ms',
          target: '(reference)',
          met: true,
        },
        {
          name: 'T2 latency p99, broad terms (≥ 1,000 matches)',
          value: percentile(broad, 99),
          unit: 'ms',
          target: '(reference)',
          met: true,
        },
      ],
    );
    console.log(
      `\nmatches per term (X-Total-Count, exact): ${[...totals].map(([t, n]) => `"${t}" ${n}`).join(', ')}`,
    );
  } finally {
    seeded.child.kill('SIGTERM');
  }
}
