/**
 * `npm run bench -- processes`: `pal serve` with SERVER_PROCESSES=1 and =2 on one PostgreSQL (a
 * throw-away cluster with durable settings), the same load against each: P2, T1, T6 with a
 * trivial workflow, T5 pairs. Beside each figure, what a request costs in CPU: the busiest server
 * process's event loop, the server processes in all (every thread), and PostgreSQL's processes;
 * from those, the figures on 4 and 8 cores are estimated. On these 2 cores the bench, PostgreSQL
 * and the servers share the same two.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startPostgresCluster } from '@pal-workflow/test-support';
import autocannon from 'autocannon';
import { printTable, type Row } from './report.js';
import { serverFlags, startChild, stopChild } from './server.js';
import { t5Pairs } from './t5-pairs.js';
import { t6Requests } from './t6-requests.js';
import { processCpuMs, threadCpu } from './thread-cpu.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = 50;
/** child-server.ts's key: the server processes must read what it seeded. */
const SECRET_KEY = '5e'.repeat(32);

interface Measured {
  perSecond: number;
  /** Event-loop CPU per request of the busiest server process, ms. */
  loopMs: number;
  /** The busiest event loop's part of all the server processes' event-loop CPU (1 when even). */
  busiestShare: number;
  /** CPU per request of the server processes and their primary (every thread), ms. */
  serviceMs: number;
  /** CPU per request of PostgreSQL's processes, ms. */
  postgresMs: number;
}

export async function runProcessesBench(root: string): Promise<void> {
  const cluster = await startPostgresCluster({
    settings: { fsync: 'on', full_page_writes: 'on', shared_buffers: '256MB' },
  });
  try {
    const databaseUrl = await cluster.createDatabase('pal_bench');
    const postgresPort = Number(new URL(cluster.adminUrl).port);
    // The bench's usual set-up (API client, pals, the workflow pal, its transactions, an SSO).
    const seeded = await startChild(root, 0, ['--workflows'], { DATABASE_URL: databaseUrl });
    await stopChild(seeded.child);
    const info = seeded.info;

    const results = new Map<number, Map<string, Measured>>();
    for (const processes of [1, 2]) {
      const server = await startPalServe(root, databaseUrl, processes);
      try {
        const base = { authorization: info.auth, accept: 'application/json' };
        const figures = new Map<string, Measured>();
        figures.set(
          'P2 getPal, JSON (req/s)',
          await measure(server, postgresPort, () =>
            load({ url: `${server.url}/services/rest/pals/expense-approval`, headers: base }),
          ),
        );
        figures.set(
          'T1 createTransaction (req/s)',
          await measure(server, postgresPort, () =>
            load({
              url: `${server.url}/services/rest/transactions`,
              method: 'POST',
              body: 'palId=expense-approval',
              headers: {
                authorization: info.auth,
                accept: 'text/plain',
                'content-type': 'application/x-www-form-urlencoded',
              },
            }),
          ),
        );
        figures.set(
          'T6 trivial workflow (runs/s)',
          await measure(server, postgresPort, () =>
            load({
              url: server.url,
              headers: { ...base, 'content-type': 'application/json' },
              requests: t6Requests(info.workflowTransactions),
            }),
          ),
        );
        figures.set(
          'T5 issue + redeem (pairs/s)',
          await measure(server, postgresPort, async () => {
            const { pairs, seconds } = await t5Pairs(
              {
                url: server.url,
                auth: info.auth,
                sso: info.sso,
                transactions: info.workflowTransactions,
              },
              CONNECTIONS,
              DURATION_S,
            );
            return { count: pairs, seconds };
          }),
        );
        results.set(processes, figures);
      } finally {
        await server.stop();
      }
    }

    const rows: Row[] = [];
    for (const [name, two] of results.get(2)!) {
      const one = results.get(1)!.get(name)!;
      const target = /T6/.test(name) ? 3000 : /T1|T5/.test(name) ? 5000 : undefined;
      rows.push({
        name: `${name}, SERVER_PROCESSES=2 (baseline: 1)`,
        value: two.perSecond,
        unit: '/s',
        baseline: one.perSecond,
        target: target === undefined ? '(reference)' : `≥ ${target.toLocaleString('en-US')}`,
        met: target === undefined || two.perSecond >= target,
      });
    }
    printTable(
      `pal serve on one PostgreSQL, SERVER_PROCESSES=2 vs 1: ${CONNECTIONS} connections, ${DURATION_S} s each, loopback, servers, PostgreSQL and load on the same 2 cores`,
      rows,
    );
    console.log(
      '\n| measure | SERVER_PROCESSES | event loop per request (busiest process; T5: per pair) | busiest loop against an even share | server processes and primary, per request | PostgreSQL per request | 4 cores | 8 cores | 8 cores, PostgreSQL elsewhere |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const [processes, figures] of results)
      for (const [name, m] of figures)
        console.log(
          `| ${name} | ${processes} | ${m.loopMs.toFixed(3)} ms | ×${m.busiestShare.toFixed(2)} | ${m.serviceMs.toFixed(3)} ms | ${m.postgresMs.toFixed(3)} ms | ${fmt(estimate(m, 4, false))} | ${fmt(estimate(m, 8, false))} | ${fmt(estimate(m, 8, true))} |`,
        );
    console.log(
      '\nEstimated on N cores (CPU per request, read from /proc around each measure): N server processes, each bound by its event loop, sharing the N cores with PostgreSQL (or not: the last column), the load generator on a machine of its own. Waits inside PostgreSQL (its WAL flush, row locks) are not in it.',
    );
  } finally {
    await cluster.stop();
  }
}

/**
 * Requests per second on `cores` cores, from what one request costs: as many server processes,
 * each bound by its event loop, sharing the cores with PostgreSQL or (`postgresElsewhere`) not.
 */
function estimate(m: Measured, cores: number, postgresElsewhere: boolean): number {
  const cpu = m.serviceMs + (postgresElsewhere ? 0 : m.postgresMs);
  return Math.min((cores * 1000) / m.loopMs, (cores * 1000) / cpu);
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

async function load(options: autocannon.Options): Promise<{ count: number; seconds: number }> {
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...options });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { count: result.requests.total, seconds: result.duration };
}

async function measure(
  server: PalServe,
  postgresPort: number,
  run: () => Promise<{ count: number; seconds: number }>,
): Promise<Measured> {
  const pids = server.servingPids();
  // The server processes and (with several) their primary, which accepts every connection.
  const servicePids = [...new Set([server.pid, ...pids])];
  const loopsBefore = pids.map((pid) => threadCpu(pid)?.main ?? 0);
  const serviceBefore = sum(servicePids.map((pid) => processCpuMs(pid)));
  const postgresBefore = postgresCpuMs(postgresPort);
  const { count, seconds } = await run();
  const loopsAfter = pids.map((pid) => threadCpu(pid)?.main ?? 0);
  const service = sum(servicePids.map((pid) => processCpuMs(pid))) - serviceBefore;
  const postgres = postgresCpuMs(postgresPort) - postgresBefore;
  const perProcess = loopsAfter.map((after, i) => after - loopsBefore[i]!);
  const requestsPerProcess = count / pids.length;
  return {
    perSecond: count / seconds,
    loopMs: Math.max(...perProcess) / requestsPerProcess,
    busiestShare: (Math.max(...perProcess) * pids.length) / sum(perProcess),
    serviceMs: service / count,
    postgresMs: postgres / count,
  };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/**
 * The bench cluster's CPU so far: its postmaster (found by its port; with the backends it has
 * reaped) and every live process under it. Other PostgreSQL servers on the machine are not in it.
 */
function postgresCpuMs(port: number): number {
  const parents = new Map<number, number>();
  let postmaster: number | undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || commOf(Number(entry)) !== 'postgres') continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmdline.includes(`port=${port}`)) postmaster = Number(entry);
    } catch {
      // ended meanwhile
    }
  }
  if (postmaster === undefined) return 0;
  let total = processCpuMs(postmaster, true);
  for (const [pid, parent] of parents) if (parent === postmaster) total += processCpuMs(pid);
  return total;
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

interface PalServe {
  url: string;
  /** The process started: the server, or the primary. */
  pid: number;
  /** The processes that serve: the server itself, or the primary's server processes. */
  servingPids(): number[];
  stop(): Promise<void>;
}

/** `pal serve` from the sources, as the bench's servers run, on a free port; once /healthz answers. */
async function startPalServe(
  root: string,
  databaseUrl: string,
  processes: number,
): Promise<PalServe> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'pal-bench-processes-'));
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PAL_SECRET_KEY: SECRET_KEY,
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'silent',
    SERVER_PROCESSES: String(processes),
    // The load generator is one client on one address: its limits are not what is measured.
    RATE_LIMIT_CLIENT_REQUESTS: '1000000000',
    RATE_LIMIT_ADDRESS_REQUESTS: '1000000000',
    WORKFLOW_RUNS_PER_ENTERPRISE: '64',
  };
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...serverFlags(env),
      '--import',
      'tsx',
      '--conditions=@pal-workflow/source',
      join(root, 'apps/server/src/main.ts'),
      'serve',
    ],
    { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise((done) => child.once('exit', done));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600 || child.exitCode !== null) throw new Error('pal serve did not start');
    await new Promise((done) => setTimeout(done, 100));
  }
  const servingPids = () => (processes === 1 ? [child.pid!] : serverProcessesOf(child.pid!));
  // The primary's port answers once one server process listens. The others are taken as started
  // once each has been idle for a second (starting, a process loads and compiles without pause):
  // connections opened before a process listens all go to the others, for the whole measure.
  for (let i = 0; servingPids().length < processes || !(await allIdle(servingPids())); i++)
    if (i > 120) throw new Error('the server processes did not settle');
  return {
    url,
    pid: child.pid!,
    servingPids,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The primary's children that run the server (not, say, an esbuild service tsx started). */
function serverProcessesOf(primary: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === primary && cmdline.includes('main.ts')) children.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return children;
}

/** True when none of `pids` used more than 30 ms of CPU over the next second. */
async function allIdle(pids: number[]): Promise<boolean> {
  const before = pids.map((pid) => processCpuMs(pid));
  await new Promise((done) => setTimeout(done, 1000));
  return pids.every((pid, i) => processCpuMs(pid) - before[i]! <= 30);
}
