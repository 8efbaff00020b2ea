/**
 * `npm run bench idempotency`: what an Idempotency-Key costs T1 (docs/events.md),
 * in the same run on SQLite: T1 without a key (the baseline), T1 with a new key on every request
 * (a claim, the work, the stored answer: two more writes), and T1 repeating one key (every
 * request but the first answered from the stored answer, without the work).
 */
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { printTable, type Row } from './report.js';
import { startChild } from './server.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = 50;

async function t1(url: string, auth: string, key: (() => string) | undefined): Promise<number> {
  const result = await autocannon({
    url: `${url}/services/rest/transactions`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    body: 'palId=expense-approval',
    headers: {
      authorization: auth,
      accept: 'text/plain',
      'content-type': 'application/x-www-form-urlencoded',
    },
    requests: [
      {
        setupRequest: (request) =>
          key ? { ...request, headers: { ...request.headers, 'idempotency-key': key() } } : request,
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`T1: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

export async function runIdempotencyBench(root: string): Promise<void> {
  const { child, info } = await startChild(root, 0);
  try {
    const plain = await t1(info.url, info.auth, undefined);
    const fresh = await t1(info.url, info.auth, () => randomUUID());
    const once = randomUUID();
    const repeated = await t1(info.url, info.auth, () => once);
    const share = (n: number) => `${Math.round((n / plain) * 100)} % of T1 without a key`;
    const rows: Row[] = [
      {
        name: 'T1 with a new Idempotency-Key per request (req/s)',
        value: fresh,
        unit: 'req/s',
        baseline: plain,
        target: `≥ 50 % (${share(fresh)}): a claim and a stored answer beside the work`,
        met: fresh >= plain * 0.5,
      },
      {
        name: 'T1 repeating one Idempotency-Key (req/s)',
        value: repeated,
        unit: 'req/s',
        baseline: plain,
        target: `≥ 80 % (${share(repeated)}): the stored answer, no work`,
        met: repeated >= plain * 0.8,
      },
    ];
    printTable(
      `Idempotency-Key on T1, SQLite: ${CONNECTIONS} connections, ${DURATION_S} s each, loopback; baseline: T1 without a key`,
      rows,
    );
  } finally {
    child.kill('SIGTERM');
  }
}
