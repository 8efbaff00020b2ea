/**
 * `npm run bench webhooks`: the outbox's cost and speed (docs/events.md), on SQLite.
 * - T1 and T6 throughput with a webhook endpoint that takes every event, beside the same without
 *   an endpoint, in the same run: what writing the events in the request's transaction costs;
 * - webhook deliveries per second to a loopback receiver that answers 204 at once, from the start
 *   of the loads until every event they made has arrived (each delivery a signed POST and two
 *   database writes): the backlog the loads leave, and how long the service takes to clear it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { t6Requests } from './t6-requests.js';
import { printTable, type Row } from './report.js';
import { startChild } from './server.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = 50;

async function load(options: autocannon.Options) {
  const result = await autocannon({ duration: DURATION_S, connections: CONNECTIONS, ...options });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

/** How long the server may take to deliver what the loads left, before the bench gives up. */
const DRAIN_LIMIT_S = 120;

/**
 * T1, then T6, on a fresh server. With `webhook`, the server is kept until `delivered()` counts
 * every event the loads made: T1 makes transaction.created, each T6 run two
 * transaction.status_changed (RUNNING, then SUCCEEDED).
 */
async function measure(root: string, webhook?: { url: string; delivered: () => number }) {
  const { child, info } = await startChild(
    root,
    0,
    ['--workflows', ...(webhook ? ['--webhook', webhook.url] : [])],
    { WEBHOOK_ALLOW_PRIVATE: 'true' },
  );
  try {
    const headers = { authorization: info.auth };
    const t1 = await load({
      url: `${info.url}/services/rest/transactions`,
      method: 'POST',
      headers: {
        ...headers,
        accept: 'text/plain',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'palId=expense-approval',
    });
    const t6 = await load({
      url: info.url,
      headers: { ...headers, accept: 'application/json', 'content-type': 'application/json' },
      requests: t6Requests(info.workflowTransactions),
    });
    const made = t1.requests.total + 2 * t6.requests.total;
    const loadsEnded = performance.now();
    const until = loadsEnded + DRAIN_LIMIT_S * 1000;
    while (webhook && webhook.delivered() < made && performance.now() < until)
      await new Promise((done) => setTimeout(done, 50));
    return {
      t1: t1.requests.average,
      t6: t6.requests.average,
      made,
      drainS: (performance.now() - loadsEnded) / 1000,
    };
  } finally {
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  }
}

export async function runWebhookBench(root: string): Promise<void> {
  let received = 0;
  let first = 0;
  let last = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      last = performance.now();
      if (received++ === 0) first = last;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bench`;
  try {
    const without = await measure(root);
    const withEndpoint = await measure(root, { url, delivered: () => received });
    const rows: Row[] = [
      {
        name: 'T1 createTransaction with a webhook endpoint (req/s)',
        value: withEndpoint.t1,
        unit: 'req/s',
        baseline: without.t1,
        target: `≥ 70 % of no endpoint (${Math.round((withEndpoint.t1 / without.t1) * 100)} %)`,
        met: withEndpoint.t1 >= without.t1 * 0.7,
      },
      {
        name: 'T6 runTransactionWorkflow with a webhook endpoint (runs/s)',
        value: withEndpoint.t6,
        unit: 'runs/s',
        baseline: without.t6,
        target: `≥ 70 % of no endpoint (${Math.round((withEndpoint.t6 / without.t6) * 100)} %)`,
        met: withEndpoint.t6 >= without.t6 * 0.7,
      },
      {
        name: `webhook deliveries from the loads' start until all ${withEndpoint.made.toLocaleString('en-US')} events they made had arrived (per s)`,
        value: received / ((last - first) / 1000 || 1),
        unit: '/s',
        target: `(reference: ${received.toLocaleString('en-US')} arrived, the last ${withEndpoint.drainS.toFixed(1)} s after the loads ended)`,
        met: received >= withEndpoint.made,
      },
    ];
    printTable(
      `Webhooks, SQLite: ${CONNECTIONS} connections, ${DURATION_S} s each, loopback receiver answering 204, all on the same cores; baseline: the same without an endpoint`,
      rows,
    );
  } finally {
    receiver.close();
  }
}
