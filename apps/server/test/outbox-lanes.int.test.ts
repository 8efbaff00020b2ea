// One tenant's slow webhook receiver must not hold up anyone else (docs/events.md, "Lanes"): the
// real server over HTTP, a real receiver on loopback and a real SMTP listener, on both engines.
// Enterprise b's receiver takes every delivery and answers none until the test lets it; while it
// holds them, a's webhooks and every mail still go out at once, and b's endpoint never has more
// than OUTBOX_ENDPOINT_CONCURRENCY deliveries under way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addWebhookEndpoint } from '../src/domain/webhooks.js';
import { startHarness, type Harness } from './harness.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

const ENDPOINT_SLOTS = 2;

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness({
    smtp: true,
    settleOutbox: false,
    env: {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      OUTBOX_CONCURRENCY: '4',
      OUTBOX_ENDPOINT_CONCURRENCY: String(ENDPOINT_SLOTS),
      WEBHOOK_TIMEOUT_MS: '30000',
      OUTBOX_POLL_MS: '100',
    },
  });
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

async function endpoint(tenant: Harness['a'], path: string): Promise<void> {
  const added = await addWebhookEndpoint(h.domain, tenant.enterpriseId, {
    url: `${receiver.url}${path}`,
    events: ['sso.created'],
  });
  receiver.secrets.set(path, [added.secret]);
}

async function eventually(condition: () => boolean, what: string, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe('a receiver that holds every delivery', () => {
  it("holds only its own endpoint's slots: other tenants' webhooks and all mail go on", async () => {
    await endpoint(h.b, '/slow');
    await endpoint(h.a, '/fast');
    let release!: () => void;
    const released = new Promise<void>((done) => (release = done));
    let underWay = 0;
    let mostUnderWay = 0;
    receiver.respond = async (hook) => {
      if (hook.path !== '/slow') return 204;
      mostUnderWay = Math.max(mostUnderWay, ++underWay);
      await released;
      underWay -= 1;
      return 204;
    };

    // More events for the slow receiver than the node has webhook slots in all.
    const slow = 10;
    for (let i = 0; i < slow; i++)
      await h.b.json.enterprise.createSso({
        firstName: 'Slow',
        lastName: `Receiver${i}`,
        email: `slow-${i}@people.example.test`,
      });
    await eventually(() => underWay >= ENDPOINT_SLOTS, 'the slow receiver holds its deliveries');
    // Time for the dispatcher to take more of them, if it would.
    await new Promise((done) => setTimeout(done, 300));

    // Meanwhile a invites one of those people (E3): an event of its own, and a mail.
    const mailsBefore = h.mails.length;
    const email = 'slow-0@people.example.test';
    await h.a.json.enterprise.inviteSso({ email });
    await eventually(() => receiver.of('/fast').length === 1, "a's webhook arrives");
    await eventually(
      () => h.mails.slice(mailsBefore).some((m) => m.envelope.to.includes(email)),
      'the invitation mail arrives',
    );
    expect(receiver.of('/fast')[0]!.verifiedBy).toEqual([0]);
    // Still held, and never more of them than the endpoint's slots.
    expect(underWay).toBe(ENDPOINT_SLOTS);
    expect(receiver.of('/slow')).toHaveLength(0);

    release();
    await eventually(() => receiver.of('/slow').length === slow, 'every slow delivery', 20_000);
    expect(new Set(receiver.of('/slow').map((r) => r.id)).size).toBe(slow);
    expect(mostUnderWay).toBe(ENDPOINT_SLOTS);
  });
});
