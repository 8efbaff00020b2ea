// Webhooks end to end (docs/events.md): the real server over HTTP, a real receiver on loopback
// that checks every delivery with the `standardwebhooks` package, on both engines. The event
// types and their data, subscriptions and tenancy, retries with backoff, giving up and
// redelivery, secret rotation, the SSRF rule at add and at send time.
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflowContext } from '../src/workflows/context.js';
import { createEnterprise } from '../src/domain/enterprises.js';
import { deployPal } from '../src/domain/pals.js';
import {
  addWebhookEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  removeEndpoint,
  rotateEndpointSecret,
} from '../src/domain/webhooks.js';
import { OutboxDispatcher } from '../src/outbox/dispatcher.js';
import { runAction } from '../src/workflows/entries.js';
import { form, startHarness, type Harness } from './harness.js';
import { manualClock, testContext } from './helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
/** OUTBOX_RETRY_WINDOW_HOURS' default, 72 hours. */
const RETRY_WINDOW_MS = 72 * 3_600_000;
const ROOT = '/services/rest';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness({
    smtp: true,
    // Deliveries are watched as they come, not awaited by the harness.
    settleOutbox: false,
    env: {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      OUTBOX_RETRY_BASE_MS: '200',
      OUTBOX_RETRY_MAX_MS: '400',
      OUTBOX_POLL_MS: '100',
    },
  });
  await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, 'wf-tx'));
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});
afterEach(() => {
  receiver.respond = undefined;
});

let paths = 0;
/** A new endpoint of enterprise `a` (or `b`) on its own path of the receiver. */
async function endpoint(options: { events?: string[]; tenant?: 'a' | 'b' } = {}) {
  const path = `/hooks/${++paths}`;
  const tenant = options.tenant === 'b' ? h.b : h.a;
  const added = await addWebhookEndpoint(h.domain, tenant.enterpriseId, {
    url: `${receiver.url}${path}`,
    events: options.events,
  });
  receiver.secrets.set(path, [added.secret]);
  return { ...added, path };
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > 500) throw new Error('waited 10 s in vain');
    await new Promise((done) => setTimeout(done, 20));
  }
}

const json = (path: string, body: Record<string, string>) =>
  h.http(`${ROOT}${path}`, { body: form(body), accept: 'application/json' }).then((answer) => {
    expect(answer.status, answer.text).toBe(200);
    return JSON.parse(answer.text) as string;
  });

describe('events to a Standard Webhooks receiver', () => {
  it('sends each event type with API ids, every delivery verified by standardwebhooks', async () => {
    const ep = await endpoint();
    const other = await endpoint({ tenant: 'b' });
    const sso = await json('/enterprises/sso', {
      firstName: 'Wanda',
      lastName: 'Hook',
      email: 'wanda@hooks.example.test',
    });
    const transactionId = await json('/transactions', { palId: 'wf-tx' });
    await h.a.json.transactions.runTransactionWorkflow({
      transactionId,
      transactionContent: { postData: [{ name: 'step', value: 'approve' }] },
    });
    // Invited by b, accepted, then deleted by b: b's events, never a's.
    await h.b.json.enterprise.inviteSso({ email: 'wanda@hooks.example.test' });
    await receiver.until(() => receiver.of(other.path).length >= 1);
    await h.a.json.enterprise.deleteSso({ sso });

    await receiver.until(() => receiver.of(ep.path).length >= 6);
    await h.server.outbox.drain();
    // Delivered in parallel: in any order.
    const got = receiver.of(ep.path);
    expect(got.map((d) => d.type).sort()).toEqual([
      'sso.created',
      'sso.deleted',
      'transaction.completed',
      'transaction.created',
      // T6: webServiceStatus IDLE → RUNNING, then the run's effects in one event.
      'transaction.status_changed',
      'transaction.status_changed',
    ]);
    for (const d of receiver.received) {
      expect(d.verifiedBy, d.body).toEqual([0]);
      expect(d.id).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
      expect(JSON.parse(d.body)).toEqual({
        type: d.type,
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: d.data,
      });
    }
    const find = (type: string, running?: string) =>
      got.find(
        (d) =>
          d.type === type &&
          (running === undefined ||
            (d.data.current as Record<string, string>).webServiceStatus === running),
      );
    const created = find('sso.created');
    const txCreated = find('transaction.created');
    const started = find('transaction.status_changed', 'RUNNING');
    const ran = find('transaction.status_changed', 'SUCCEEDED');
    const completed = find('transaction.completed');
    const deleted = find('sso.deleted');
    expect(created!.data).toEqual({ sso, status: 'ACTIVE' });
    expect(txCreated!.data).toEqual({
      transactionId,
      palId: 'wf-tx',
      status: 'NEW',
      systemStatus: 'OPEN',
      webServiceStatus: 'IDLE',
    });
    expect(started!.data).toEqual({
      transactionId,
      palId: 'wf-tx',
      changed: ['webServiceStatus'],
      previous: { status: 'NEW', systemStatus: 'OPEN', webServiceStatus: 'IDLE' },
      current: { status: 'NEW', systemStatus: 'OPEN', webServiceStatus: 'RUNNING' },
    });
    expect(ran!.data).toEqual({
      transactionId,
      palId: 'wf-tx',
      changed: ['status', 'systemStatus', 'webServiceStatus'],
      previous: { status: 'NEW', systemStatus: 'OPEN', webServiceStatus: 'RUNNING' },
      current: { status: 'APPROVED', systemStatus: 'COMPLETED', webServiceStatus: 'SUCCEEDED' },
    });
    expect(completed!.data).toEqual({ transactionId, palId: 'wf-tx', status: 'APPROVED' });
    expect(deleted!.data).toEqual({ sso });
    // Only b's endpoint heard of b's invitation: an SSO of b's, pending.
    expect(receiver.of(other.path).map((d) => [d.type, d.data.status])).toEqual([
      ['sso.created', 'PENDING_ACTIVATION'],
    ]);
    expect(receiver.of(ep.path).some((d) => d.data.status === 'PENDING_ACTIVATION')).toBe(false);
    await removeEndpoint(h.domain, ep.id);
    await removeEndpoint(h.domain, other.id);
  });

  it('a failed T6 run and a page run each tell what moved from the state before it', async () => {
    const ep = await endpoint({
      events: ['transaction.status_changed', 'transaction.completed'],
    });
    const transactionId = await json('/transactions', { palId: 'wf-tx' });
    const failed = await h.http(`${ROOT}/transactions/${transactionId}/runWorkflow`, {
      body: JSON.stringify({ postData: [{ name: 'step', value: 'fail-after-set' }] }),
      headers: { 'content-type': 'application/json' },
      accept: 'application/json',
    });
    expect(failed.status, failed.text).toBe(200);
    expect(JSON.parse(failed.text)).toMatchObject({ success: false });
    // A page's run moves status and systemStatus, never webServiceStatus.
    const session = {
      kind: 'participant' as const,
      enterpriseId: h.a.enterpriseId,
      palId: 'wf-tx',
      transactionId,
      ssoId: null,
      standingSso: '',
      role: 'participant',
      profile: null,
      csrf: '',
      outcome: null,
    };
    const page = await runAction(h.domain, session, 'runWorkflow', { step: 'approve' });
    expect(page.success, JSON.stringify(page)).toBe(true);

    await receiver.until(() => receiver.of(ep.path).length >= 4);
    await h.server.outbox.drain();
    const states = (status: string, systemStatus: string, webServiceStatus: string) => ({
      status,
      systemStatus,
      webServiceStatus,
    });
    const got = receiver.of(ep.path).map((d) => d.data);
    expect(got).toHaveLength(4);
    expect(got).toEqual(
      expect.arrayContaining([
        {
          transactionId,
          palId: 'wf-tx',
          changed: ['webServiceStatus'],
          previous: states('NEW', 'OPEN', 'IDLE'),
          current: states('NEW', 'OPEN', 'RUNNING'),
        },
        {
          transactionId,
          palId: 'wf-tx',
          changed: ['webServiceStatus'],
          previous: states('NEW', 'OPEN', 'RUNNING'),
          current: states('NEW', 'OPEN', 'FAILED'),
        },
        {
          transactionId,
          palId: 'wf-tx',
          changed: ['status', 'systemStatus'],
          previous: states('NEW', 'OPEN', 'FAILED'),
          current: states('APPROVED', 'COMPLETED', 'FAILED'),
        },
        { transactionId, palId: 'wf-tx', status: 'APPROVED' },
      ]),
    );
    await removeEndpoint(h.domain, ep.id);
  });

  it('sso.activated when an invitation is accepted; an endpoint gets only the types it chose', async () => {
    const chosen = await endpoint({ events: ['sso.activated'] });
    const all = await endpoint();
    await h.b.json.enterprise.createSso({
      firstName: 'Ada',
      lastName: 'Accept',
      email: 'ada@hooks.example.test',
    });
    const before = h.mails.length;
    const sso = await h.a.json.enterprise.inviteSso({ email: 'ada@hooks.example.test' });
    await waitFor(() => h.mails.length > before);
    const mail = h.mails[before]!;
    const link = /\/services\/invitations\/[A-Za-z0-9_-]{43}/.exec(mail.mail.text ?? '')![0];
    const accepted = await h.http(link, { method: 'POST', auth: null, accept: 'text/html' });
    expect(accepted.status).toBe(200);
    await receiver.until(() => receiver.of(chosen.path).length >= 1);
    await receiver.until(() => receiver.of(all.path).length >= 2);
    expect(receiver.of(chosen.path).map((d) => [d.type, d.data])).toEqual([
      ['sso.activated', { sso }],
    ]);
    expect(
      receiver
        .of(all.path)
        .map((d) => d.type)
        .sort(),
    ).toEqual(['sso.activated', 'sso.created']);
    await removeEndpoint(h.domain, chosen.id);
    await removeEndpoint(h.domain, all.id);
  });
});

describe('retries, failure and redelivery', () => {
  it('a receiver answering 500 twice is retried with growing waits, under one webhook-id', async () => {
    const ep = await endpoint({ events: ['transaction.created'] });
    let calls = 0;
    receiver.respond = (hook) => (hook.path === ep.path && ++calls <= 2 ? 500 : 204);
    await json('/transactions', { palId: 'wf-tx' });
    await receiver.until(() => receiver.of(ep.path).some((d) => d.status === 204));
    const attempts = receiver.of(ep.path);
    expect(attempts.map((d) => d.status)).toEqual([500, 500, 204]);
    expect(new Set(attempts.map((d) => d.id)).size).toBe(1);
    expect(attempts.every((d) => d.verifiedBy.length === 1)).toBe(true);
    // Waits: after attempt 1 between 100 and 200 ms, after attempt 2 between 200 and 400 ms.
    const gaps = [attempts[1]!.at - attempts[0]!.at, attempts[2]!.at - attempts[1]!.at];
    expect(gaps[0]).toBeGreaterThanOrEqual(95);
    expect(gaps[1]).toBeGreaterThanOrEqual(195);
    // The receiver answers before the dispatcher records the outcome (outcomes that end together
    // are committed in one batch), so the record may trail the 204 by a moment.
    await expect
      .poll(async () => (await listDeliveries(h.domain, ep.id))[0]?.status, { timeout: 10_000 })
      .toBe('delivered');
    const [delivery] = await listDeliveries(h.domain, ep.id);
    expect(delivery).toMatchObject({ id: attempts[0]!.id, status: 'delivered', attempts: 3 });
    await removeEndpoint(h.domain, ep.id);
  });

  it('past its retry window a message is marked failed; redeliver sends it again, same id', async () => {
    const clock = manualClock(new Date());
    const t = await testContext({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { now: clock.now });
    const dispatcher = new OutboxDispatcher(t.ctx);
    try {
      const enterprise = (await createEnterprise(t.ctx, 'Fails')).id;
      const path = `/hooks/${++paths}`;
      const added = await addWebhookEndpoint(t.ctx, enterprise, { url: `${receiver.url}${path}` });
      receiver.secrets.set(path, [added.secret]);
      receiver.respond = (hook) => (hook.path === path ? 503 : 204);
      const { createSso } = await import('../src/domain/ssos.js');
      await createSso(t.ctx, enterprise, { firstName: 'F', lastName: 'G', email: 'f@g.test' });
      // Its first attempt comes as the retry window (72 hours) closes: the next would fall past it.
      clock.advance(RETRY_WINDOW_MS);
      await dispatcher.start();
      await receiver.until(() => receiver.of(path).length >= 1);
      await dispatcher.drain();
      const [failed] = await listDeliveries(t.ctx, added.id);
      expect(failed).toMatchObject({ status: 'failed', attempts: 1, lastError: 'HTTP 503' });

      receiver.respond = undefined;
      expect(await redeliver(t.ctx, failed!.id)).toMatchObject({ status: 'pending' });
      await receiver.until(() => receiver.of(path).length >= 2);
      await dispatcher.drain();
      const hooks = receiver.of(path);
      expect(hooks.map((d) => [d.id, d.status])).toEqual([
        [failed!.id, 503],
        [failed!.id, 204],
      ]);
      expect(hooks[1]!.body).toBe(hooks[0]!.body);
      expect((await listDeliveries(t.ctx, added.id))[0]).toMatchObject({ status: 'delivered' });
      // Pending messages are not redelivered; unknown ones are not found.
      await expect(redeliver(t.ctx, 'msg_unknown')).rejects.toMatchObject({ statusCode: 404 });
    } finally {
      await dispatcher.stop();
      await t.close();
    }
  });

  it('a receiver that does not answer in time is a failed attempt, retried', async () => {
    const t = await testContext({
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_TIMEOUT_MS: '300',
      OUTBOX_RETRY_BASE_MS: '100',
      OUTBOX_RETRY_MAX_MS: '100',
    });
    const dispatcher = new OutboxDispatcher(t.ctx);
    try {
      const enterprise = (await createEnterprise(t.ctx, 'Slow')).id;
      const path = `/hooks/${++paths}`;
      const added = await addWebhookEndpoint(t.ctx, enterprise, { url: `${receiver.url}${path}` });
      receiver.secrets.set(path, [added.secret]);
      let calls = 0;
      receiver.respond = async (hook) => {
        if (hook.path === path && ++calls === 1) await new Promise((d) => setTimeout(d, 1000));
        return 204;
      };
      await dispatcher.start();
      const { createSso } = await import('../src/domain/ssos.js');
      await createSso(t.ctx, enterprise, { firstName: 'S', lastName: 'L', email: 's@l.test' });
      await receiver.until(() => receiver.of(path).length >= 2);
      await dispatcher.drain();
      const [delivery] = await listDeliveries(t.ctx, added.id);
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
    } finally {
      await dispatcher.stop();
      await t.close();
    }
  });
});

describe('secrets', () => {
  it('after a rotation both the new and the old secret verify, until the overlap ends', async () => {
    const ep = await endpoint({ events: ['transaction.created'] });
    const rotated = await rotateEndpointSecret(h.domain, ep.id);
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.secret).not.toBe(ep.secret);
    receiver.secrets.set(ep.path, [rotated.secret, ep.secret]);
    await json('/transactions', { palId: 'wf-tx' });
    await receiver.until(() => receiver.of(ep.path).length >= 1);
    const [hook] = receiver.of(ep.path);
    expect(hook!.signature.split(' ')).toHaveLength(2);
    expect(hook!.verifiedBy).toEqual([0, 1]);
    await removeEndpoint(h.domain, ep.id);
  });

  it('refuses a second endpoint at the same URL of one enterprise (its events would come twice)', async () => {
    const ep = await endpoint();
    await expect(
      addWebhookEndpoint(h.domain, h.a.enterpriseId, { url: ep.url }),
    ).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining(ep.id) });
    expect(
      (await listEndpoints(h.domain, h.a.enterpriseId)).filter((e) => e.url === ep.url),
    ).toHaveLength(1);
    await removeEndpoint(h.domain, ep.id);
  });

  it('keeps secrets sealed in the database', async () => {
    const ep = await endpoint();
    const rows = await h.domain.db.selectFrom('webhook_endpoints').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(ep.secret.slice('whsec_'.length, 20));
    await removeEndpoint(h.domain, ep.id);
  });
});

describe('endpoints on inner addresses (SSRF)', () => {
  it('are refused when added, unless WEBHOOK_ALLOW_PRIVATE=true', async () => {
    const t = await testContext();
    try {
      const enterprise = (await createEnterprise(t.ctx, 'Closed')).id;
      for (const url of [
        'http://127.0.0.1:8080/hook',
        'http://localhost/hook',
        'http://[::1]/hook',
        'http://[::ffff:127.0.0.1]/hook',
        'http://10.1.2.3/hook',
        'http://172.20.0.1/hook',
        'http://192.168.1.1/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://100.64.0.1/',
        'http://[fd00::1]/',
        'http://[fe80::1]/',
        'http://0.0.0.0/',
        'http://2130706433/', // 127.0.0.1 as one number
      ]) {
        await expect(addWebhookEndpoint(t.ctx, enterprise, { url }), url).rejects.toMatchObject({
          statusCode: 400,
          code: 'INVALID_ARGUMENT',
        });
      }
      for (const url of ['ftp://example.com/', 'http://user:pw@example.com/', 'not a url'])
        await expect(addWebhookEndpoint(t.ctx, enterprise, { url }), url).rejects.toMatchObject({
          statusCode: 400,
        });
    } finally {
      await t.close();
    }
  });

  it('are refused at send time too (a name that now resolves to loopback)', async () => {
    // Past the retry window at the first attempt: a refused send is marked failed at once.
    const clock = manualClock(new Date());
    const t = await testContext({}, { now: clock.now });
    const dispatcher = new OutboxDispatcher(t.ctx);
    try {
      const enterprise = (await createEnterprise(t.ctx, 'Rebound')).id;
      // Added while it was allowed, as if its name resolved elsewhere then: `localhost` now
      // resolves to loopback, which this node refuses to connect to.
      const allowing = createWorkflowContext({
        db: t.ctx.db,
        config: { ...t.ctx.config, outbox: { ...t.ctx.config.outbox, webhookAllowPrivate: true } },
        log: t.ctx.log,
      });
      const port = new URL(receiver.url).port;
      for (const host of ['localhost', '127.0.0.1']) {
        const path = `/hooks/${++paths}`;
        await addWebhookEndpoint(allowing, enterprise, { url: `http://${host}:${port}${path}` });
      }
      await allowing.engine.close();
      const { createSso } = await import('../src/domain/ssos.js');
      await createSso(t.ctx, enterprise, { firstName: 'R', lastName: 'B', email: 'r@b.test' });
      const before = receiver.received.length;
      clock.advance(RETRY_WINDOW_MS);
      await dispatcher.start();
      await dispatcher.drain();
      expect(receiver.received.length).toBe(before);
      const errors = await t.ctx.db
        .selectFrom('outbox_messages')
        .select(['status', 'last_error'])
        .orderBy('last_error')
        .execute();
      expect(errors).toEqual([
        {
          status: 'failed',
          last_error: expect.stringContaining('127.0.0.1 is not a public address'),
        },
        {
          status: 'failed',
          last_error: expect.stringContaining(
            'localhost resolves to 127.0.0.1, not a public address',
          ),
        },
      ]);
    } finally {
      await dispatcher.stop();
      await t.close();
    }
  });
});
