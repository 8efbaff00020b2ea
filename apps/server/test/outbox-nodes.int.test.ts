// Two nodes on one PostgreSQL database share the outbox (docs/events.md): each message is taken
// by one node at a time, so without a crash every webhook is delivered exactly once, and never by
// both nodes at once, however the events were spread over them. The receiver counts deliveries
// per webhook-id and how many of one id were open at the same moment.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createClient } from '../src/domain/clients.js';
import { createEnterprise } from '../src/domain/enterprises.js';
import { deployPal } from '../src/domain/pals.js';
import { addWebhookEndpoint, removeEndpoint } from '../src/domain/webhooks.js';
import { startServer, type RunningServer } from '../src/server.js';
import { engine, freshDatabaseEnv } from './engine.js';
import { basic } from './harness.js';
import { tempDir, TEST_SECRET_KEY } from './helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const EVENTS = 300;

describe.runIf(engine === 'postgres')('two nodes on one PostgreSQL', () => {
  const dir = tempDir('pal-outbox-nodes-');
  let receiver: WebhookReceiver;
  let nodes: RunningServer[] = [];
  let authorization: string;
  const open = new Map<string, number>();
  let overlaps = 0;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // Held open a while, so that a message taken by both nodes would overlap.
    receiver.respond = async (hook) => {
      const now = (open.get(hook.id) ?? 0) + 1;
      open.set(hook.id, now);
      if (now > 1) overlaps += 1;
      await new Promise((done) => setTimeout(done, 15));
      open.set(hook.id, open.get(hook.id)! - 1);
      return 204;
    };
    const env = {
      ...(await freshDatabaseEnv()),
      PAL_SECRET_KEY: TEST_SECRET_KEY,
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: '0',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      OUTBOX_CONCURRENCY: '16',
    };
    nodes = [
      await startServer(loadConfig({ ...env, DATA_DIR: join(dir.path, 'a') }), { logger: false }),
      await startServer(loadConfig({ ...env, DATA_DIR: join(dir.path, 'b') }), { logger: false }),
    ];
    const { domain } = nodes[0]!;
    const enterprise = (await createEnterprise(domain, 'Two Nodes')).id;
    const client = await createClient(domain, enterprise);
    authorization = basic(client.username, client.password);
    await deployPal(domain, enterprise, join(FIXTURES, 'wf-tx'));
    const added = await addWebhookEndpoint(domain, enterprise, {
      url: `${receiver.url}/nodes`,
      events: ['transaction.created'],
    });
    receiver.secrets.set('/nodes', [added.secret]);
  }, 60_000);
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await receiver?.close();
    dir.remove();
  });

  it('delivers every event once, none by both nodes at once', async () => {
    const created: string[] = [];
    let next = 0;
    const writer = async () => {
      while (next < EVENTS) {
        const node = nodes[next++ % 2]!;
        const response = await fetch(`${node.url}/services/rest/transactions`, {
          method: 'POST',
          headers: { authorization, accept: 'text/plain' },
          body: new URLSearchParams({ palId: 'wf-tx' }),
        });
        expect(response.status).toBe(200);
        created.push(await response.text());
      }
    };
    await Promise.all(Array.from({ length: 8 }, writer));
    await receiver.until(
      (got) => new Set(got.map((d) => d.data.transactionId)).size >= EVENTS,
      60_000,
    );
    await Promise.all(nodes.map((node) => node.outbox.drain()));

    const perId = new Map<string, number>();
    for (const d of receiver.received) perId.set(d.id, (perId.get(d.id) ?? 0) + 1);
    expect(perId.size).toBe(EVENTS);
    expect([...perId.values()].filter((n) => n !== 1)).toEqual([]);
    expect(overlaps).toBe(0);
    expect(new Set(receiver.received.map((d) => d.data.transactionId))).toEqual(new Set(created));
    expect(receiver.received.every((d) => d.verifiedBy.length === 1)).toBe(true);
    // Both nodes took part: every commit wakes both, and each takes what the other has not.
    const counts = nodes.map((node) => node.outbox.counts.delivered);
    expect(counts.every((n) => n > 0)).toBe(true);
    expect(counts[0]! + counts[1]!).toBe(EVENTS);
    const rows = await nodes[0]!.domain.db
      .selectFrom('outbox_messages')
      .select(['status'])
      .execute();
    expect(rows.every((r) => r.status === 'delivered')).toBe(true);
  }, 120_000);

  // What a cache of the endpoints would have to keep (docs/performance.md, "Fewer statements per
  // write"): another node's change of them counts from the next event on, not a while later.
  it("an endpoint added on one node gets the other node's next event; removed, the next event still commits", async () => {
    const [a, b] = nodes as [RunningServer, RunningServer];
    const enterpriseId = (
      await a.domain.db.selectFrom('enterprises').select('id').executeTakeFirstOrThrow()
    ).id;
    const create = async (node: RunningServer) => {
      const response = await fetch(`${node.url}/services/rest/transactions`, {
        method: 'POST',
        headers: { authorization, accept: 'text/plain' },
        body: new URLSearchParams({ palId: 'wf-tx' }),
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    const messagesOf = (endpointId: string) =>
      b.domain.db
        .selectFrom('outbox_messages')
        .select('payload')
        .where('endpoint_id', '=', endpointId)
        .execute();
    await create(b);
    const added = await addWebhookEndpoint(a.domain, enterpriseId, {
      url: `${receiver.url}/nodes-added`,
      events: ['transaction.created'],
    });
    receiver.secrets.set('/nodes-added', [added.secret]);
    const next = await create(b);
    expect(
      (await messagesOf(added.id)).map((m) => JSON.parse(m.payload).data.transactionId),
    ).toEqual([next]);

    await removeEndpoint(a.domain, added.id);
    await create(b);
    expect(await messagesOf(added.id)).toEqual([]);
  });
});
