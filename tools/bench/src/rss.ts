/**
 * `npm run bench rss`: the server's resident memory under load. A bench server started as
 * `npm start` starts it (the V8 flags of apps/server/bin/node-flags.js, from the same settings),
 * 100 connections of P2 JSON for 15 s, its VmRSS read from /proc every 100 ms: the peak and the
 * end beside the idle figure and the throughput of the same run. Then the same with V8's own heap
 * defaults (V8_SEMI_SPACE_MB=0), for what the flags cost in throughput and save in memory.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { printTable, type Row } from './report.js';
import { serverFlags, startChild, stopChild } from './server.js';

const MiB = 1024 * 1024;
const CONNECTIONS = 100;
const DURATION_S = 15;
const TARGET_MIB = 200;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return (Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * 1024) / MiB;
}

interface Figures {
  flags: string[];
  idle: number;
  peak: number;
  end: number;
  throughput: number;
}

async function measure(root: string, env: Record<string, string>): Promise<Figures> {
  const { child, info } = await startChild(root, 0, [], env);
  const pid = child.pid!;
  try {
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 1000));
    const idle = rssOf(pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 100);
    const result = await autocannon({
      url: `${info.url}/services/rest/pals/expense-approval`,
      connections: CONNECTIONS,
      duration: DURATION_S,
      headers: { accept: 'application/json', authorization: info.auth },
    });
    clearInterval(sampler);
    const end = rssOf(pid);
    peak = Math.max(peak, end);
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`P2: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return {
      flags: serverFlags({ ...process.env, ...env }),
      idle,
      peak,
      end,
      throughput: result.requests.average,
    };
  } finally {
    await stopChild(child);
  }
}

export async function runRssBench(root: string): Promise<void> {
  const started = await measure(root, {});
  const defaults = await measure(root, {
    V8_SEMI_SPACE_MB: '0',
    V8_OLD_SPACE_MB: '0',
    V8_HEAP_GROWING_PERCENT: '0',
  });
  const named = (f: Figures) => (f.flags.length ? f.flags.join(' ') : "V8's defaults");
  const rows: Row[] = [];
  for (const [f, target] of [
    [started, true],
    [defaults, false],
  ] as const) {
    rows.push(
      {
        name: `RSS peak under load, ${named(f)} (baseline: idle)`,
        value: f.peak,
        unit: 'MiB',
        baseline: f.idle,
        target: target ? `≤ ${TARGET_MIB} MiB (as npm start runs)` : '(reference)',
        met: !target || f.peak <= TARGET_MIB,
      },
      {
        name: `RSS at the end of the load, ${named(f)} (baseline: idle)`,
        value: f.end,
        unit: 'MiB',
        baseline: f.idle,
        target: target ? `≤ ${TARGET_MIB} MiB` : '(reference)',
        met: !target || f.end <= TARGET_MIB,
      },
    );
  }
  rows.push({
    name: `P2 getPal JSON, ${named(started)} (req/s; baseline: ${named(defaults)})`,
    value: started.throughput,
    unit: 'req/s',
    baseline: defaults.throughput,
    target: `(the flags' cost: ${Math.round((started.throughput / defaults.throughput) * 100)} % of V8's defaults)`,
    met: true,
  });
  printTable(
    `Server RSS: ${CONNECTIONS} connections of P2 JSON for ${DURATION_S} s each, VmRSS every 100 ms; first as npm start runs the server, then on V8's heap defaults`,
    rows,
  );
}
