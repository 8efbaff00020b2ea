/**
 * `npm run bench [section]`: prints figures side by side with their baselines,
 * from one run. Sections: generate, server, rss, processes, workflows, writes, webhooks,
 * idempotency, documents (default: all); `throughput` is the P1/P2 part of server alone, `search` its T2 part,
 * `nodes` its two-nodes-on-one-PostgreSQL part, `web` its session-page part.
 * `rss`: the server's resident memory under 100 connections of P2, as `npm start` runs it.
 * `processes`: `pal serve` with SERVER_PROCESSES=2 against 1 on PostgreSQL, and from what a request
 * costs, the figures on 4 and 8 cores.
 * `hostile` (only when named): the memory four hostile workflow runs cost the server.
 * `snapshot` (only when named): the service's sandbox beside quickjs-wasi's snapshots, the
 *   alternative measured before the service's way was chosen.
 */
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runGenerateBench } from './generate.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const sections = process.argv.slice(2);
const wants = (name: string) => sections.length === 0 || sections.includes(name);

if (wants('generate')) runGenerateBench(ROOT);
if (wants('workflows')) {
  const { runWorkflowBench } = await import('./workflows.js');
  await runWorkflowBench(ROOT);
}
if (wants('writes')) {
  const { runWriteBench } = await import('./writes.js');
  await runWriteBench(ROOT);
}
if (wants('idempotency')) {
  const { runIdempotencyBench } = await import('./idempotency.js');
  await runIdempotencyBench(ROOT);
}
if (wants('documents')) {
  const { runDocumentsBench } = await import('./documents.js');
  await runDocumentsBench(ROOT);
}
if (sections.includes('hostile')) {
  const { runHostileBench } = await import('./hostile.js');
  await runHostileBench(ROOT);
}
if (sections.includes('snapshot')) {
  const { runSandboxSnapshotBench } = await import('./sandbox-snapshot.js');
  await runSandboxSnapshotBench();
}
if (wants('webhooks')) {
  const { runWebhookBench } = await import('./webhooks.js');
  await runWebhookBench(ROOT);
}
if (wants('processes')) {
  const { runProcessesBench } = await import('./processes.js');
  await runProcessesBench(ROOT);
}
if (wants('rss')) {
  const { runRssBench } = await import('./rss.js');
  await runRssBench(ROOT);
}
if (wants('server')) {
  const { runServerBench } = await import('./server.js');
  await runServerBench(ROOT);
} else {
  for (const part of ['throughput', 'nodes', 'search', 'web'] as const) {
    if (!sections.includes(part)) continue;
    const { runServerBench } = await import('./server.js');
    await runServerBench(ROOT, part);
  }
}
