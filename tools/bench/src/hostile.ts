/**
 * `npm run bench hostile`: what four hostile runs cost the server's process (issue 16: a pal
 * that hands the host as much as it can). One server process of its own, default settings but a
 * 20 s time limit;
 * its resident memory (VmRSS, and the peak VmHWM) before and after each attack, how each run
 * ended, and whether /healthz and a normal run still answer afterwards. Figures, not a test.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { printTable, type Row } from './report.js';
import { startChild } from './server.js';

const MiB = 1024 * 1024;
const TIMEOUT_MS = 20_000;

function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { rss: (kib('VmRSS') * 1024) / MiB, peak: (kib('VmHWM') * 1024) / MiB };
}

export async function runHostileBench(root: string): Promise<void> {
  // A time limit long enough for each attack to finish its loop (with the default 1 s, a loaded
  // machine ends some of them as timeouts, which hands the host nothing).
  const { child, info } = await startChild(root, 0, ['--workflows', '--hostile'], {
    WORKFLOW_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  const pid = child.pid!;
  const headers = {
    authorization: info.auth,
    accept: 'application/json',
    'content-type': 'application/json',
  };
  const body = (values: Record<string, string | number>) =>
    JSON.stringify({
      postData: Object.entries(values).map(([name, value]) => ({ name, value: String(value) })),
    });
  const call = async (path: string, values: Record<string, string | number>) => {
    const response = await fetch(`${info.url}/services/rest/${path}`, {
      method: 'POST',
      headers,
      body: body(values),
    });
    const text = await response.text();
    const parsed = JSON.parse(text) as { success?: boolean; messages?: { type?: string }[] };
    return {
      status: response.status,
      outcome: parsed.success
        ? 'success'
        : `${parsed.messages?.[0]?.type ?? response.status}, ${text.length.toLocaleString('en-US')} characters answered`,
    };
  };
  const transaction = async () => {
    const response = await fetch(`${info.url}/services/rest/transactions`, {
      method: 'POST',
      headers: {
        ...headers,
        accept: 'text/plain',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'palId=wf-hostile',
    });
    return response.text();
  };

  try {
    const attacks: [string, () => Promise<{ status: number; outcome: string }>][] = [
      [
        'T6: 100,000 variables of 100 characters in a loop',
        async () =>
          call(`transactions/${await transaction()}/runWorkflow`, {
            attack: 'vars',
            n: 100_000,
            size: 100,
          }),
      ],
      [
        'T6: an error of 21,000,000 characters',
        async () =>
          call(`transactions/${await transaction()}/runWorkflow`, {
            attack: 'error',
            n: 21_000_000,
          }),
      ],
      [
        'T6: 50,000 role changes in a loop',
        async () =>
          call(`transactions/${await transaction()}/runWorkflow`, {
            attack: 'roles',
            n: 50_000,
            sso: info.sso,
          }),
      ],
      [
        'C7 × 5: 100,000 console variables of 100 characters each run',
        async () => {
          let last = { status: 0, outcome: '' };
          for (const prefix of ['a', 'b', 'c', 'd', 'e'])
            last = await call('console/wf-hostile/runWorkflow', {
              attack: 'vars',
              n: 100_000,
              size: 100,
              prefix,
            });
          return last;
        },
      ],
    ];
    const start = memoryOf(pid);
    const rows: Row[] = [
      { name: 'RSS at start', value: start.rss, unit: 'MiB', target: '(reference)', met: true },
    ];
    for (const [name, attack] of attacks) {
      const began = performance.now();
      const { outcome } = await attack();
      const ms = performance.now() - began;
      const after = memoryOf(pid);
      rows.push({
        name: `after ${name} (${outcome}; ${Math.round(ms).toLocaleString('en-US')} ms)`,
        value: after.rss,
        unit: 'MiB',
        baseline: start.rss,
        target: '(reference)',
        met: true,
      });
    }
    const end = memoryOf(pid);
    rows.push({
      name: 'peak RSS (VmHWM)',
      value: end.peak,
      unit: 'MiB',
      baseline: start.rss,
      target: '(reference)',
      met: true,
    });
    const health = await fetch(`${info.url}/healthz`);
    const normal = await call(`transactions/${await transaction()}/runWorkflow`, {});
    rows.push({
      name: `then /healthz ${health.status} and a normal T6: ${normal.outcome}`,
      value: memoryOf(pid).rss,
      unit: 'MiB',
      baseline: start.rss,
      target: '/healthz 200 and a normal run succeeds',
      met: health.status === 200 && normal.outcome === 'success',
    });
    printTable(
      `Four hostile runs against one server (WORKFLOW_TIMEOUT_MS=${TIMEOUT_MS}, other settings default), RSS of its process`,
      rows,
    );
  } finally {
    child.kill('SIGTERM');
  }
}
