// Rate limits (docs/decisions.md, "Rate limits"; issue 16): every request is counted, against its
// API client when its credentials are valid, else against its address (/healthz too, but it is
// never refused). Over the limit: 429 with Retry-After and an errorResult of type RATE_LIMITED in
// the negotiated format; every answer carries RateLimit-Policy and RateLimit
// (draft-ietf-httpapi-ratelimit-headers-11).
// On PostgreSQL the nodes share the count; on SQLite each process counts its own.
import { connect } from 'node:net';
import { openApiDocument } from '@pal-workflow/server-skeleton';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createClient, type NewApiClient } from '../src/domain/clients.js';
import { createWorkflowContext, type WorkflowContext } from '../src/workflows/context.js';
import { addressKey, RateLimits } from '../src/http/rate-limits.js';
import { openRateCountPool } from '../src/storage/rate-counts.js';
import { openDatabase } from '../src/storage/database.js';
import { engine } from './engine.js';
import { basic, expectError, startHarness, type Answer, type Harness } from './harness.js';

const CLIENT_LIMIT = 5;
const ADDRESS_LIMIT = 12;
const WINDOW = 60;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    env: {
      RATE_LIMIT_CLIENT_REQUESTS: String(CLIENT_LIMIT),
      RATE_LIMIT_ADDRESS_REQUESTS: String(ADDRESS_LIMIT),
      RATE_LIMIT_WINDOW_SECONDS: String(WINDOW),
    },
  });
});
afterAll(() => h?.close());

const PAL = '/services/rest/pals/bare';
const clientAuth = (c: NewApiClient) => basic(c.username, c.password);
const newClient = () => createClient(h.domain, h.a.enterpriseId);

/** The RateLimit-Policy and RateLimit fields of an answer, read by the draft's syntax. */
function standing(answer: Answer): { policy: string; q: number; w: number; r: number; t: number } {
  const policy = answer.headers.get('RateLimit-Policy');
  const limit = answer.headers.get('RateLimit');
  const p = /^"(client|address)";q=(\d+);w=(\d+)$/.exec(policy ?? '');
  const l = /^"(client|address)";r=(\d+);t=(\d+)$/.exec(limit ?? '');
  expect(p, `RateLimit-Policy: ${policy}`).not.toBeNull();
  expect(l, `RateLimit: ${limit}`).not.toBeNull();
  expect(l![1]).toBe(p![1]);
  const t = Number(l![3]);
  expect(t).toBeGreaterThan(0);
  expect(t).toBeLessThanOrEqual(WINDOW);
  return { policy: p![1]!, q: Number(p![2]), w: Number(p![3]), r: Number(l![2]), t };
}

function expectLimited(answer: Answer, format: 'xml' | 'json' = 'xml') {
  expectError(answer, 429, 'RATE_LIMITED', format);
  const retryAfter = Number(answer.headers.get('Retry-After'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW);
  const s = standing(answer);
  expect(s.r).toBe(0);
  // Retry-After is not earlier than the end of the effective window (the draft's section 6).
  expect(retryAfter).toBeGreaterThanOrEqual(s.t);
  return s;
}

describe('the headers', () => {
  it('are on every answer of an operation, counting down the client’s quota', async () => {
    const client = await newClient();
    const first = await h.http(PAL, { auth: clientAuth(client) });
    expect(first.status).toBe(200);
    expect(standing(first)).toMatchObject({ policy: 'client', q: CLIENT_LIMIT, w: WINDOW, r: 4 });
    // An error answer of an authenticated request counts and says so too.
    const missing = await h.http('/services/rest/pals/no-such-pal', { auth: clientAuth(client) });
    expect(missing.status).toBe(404);
    expect(standing(missing)).toMatchObject({ policy: 'client', r: 3 });
  });

  it('count by address without valid credentials: 401s, pages, the documents, unknown paths, bad addresses', async () => {
    const from = '127.0.0.20';
    const answers = [
      await h.fromAddress(from, PAL, { auth: null }),
      await h.fromAddress(from, PAL, { auth: basic('nobody', 'x') }),
      await h.fromAddress(from, '/services/session', { auth: null }),
      await h.fromAddress(from, '/services/invitations/unknown-token', { auth: null }),
      await h.fromAddress(from, '/openapi.json', { auth: null }),
      await h.fromAddress(from, '/docs', { auth: null }),
      await h.fromAddress(from, '/no/such/path', { auth: null }),
      // The router refuses it before any route or hook.
      await h.fromAddress(from, '/services/rest/pals/%zz', { auth: null }),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 410, 200, 200, 404, 400]);
    expect(answers.map((a) => standing(a))).toEqual(
      answers.map((_, i) => ({
        policy: 'address',
        q: ADDRESS_LIMIT,
        w: WINDOW,
        r: ADDRESS_LIMIT - 1 - i,
        t: expect.any(Number),
      })),
    );
  });

  it('are on /healthz too, which counts by its address but is never refused', async () => {
    for (let i = 0; i < ADDRESS_LIMIT + 2; i++) {
      const answer = await h.fromAddress('127.0.0.21', '/healthz', { auth: null });
      expect(answer.status).toBe(200);
      expect(standing(answer)).toMatchObject({
        policy: 'address',
        q: ADDRESS_LIMIT,
        r: Math.max(0, ADDRESS_LIMIT - 1 - i),
      });
    }
  });

  it('are on the 400 of an HTTP/1.1 request without Host, counted by its address', async () => {
    const { port } = new URL(h.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.25' });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('error', reject);
      socket.on('end', () => resolve(text));
      socket.write(`GET ${PAL} HTTP/1.1\r\nConnection: close\r\n\r\n`);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('an HTTP/1.1 request needs a Host header');
    expect(raw).toMatch(/\r\nratelimit-policy: "address";q=12;w=60\r\n/i);
    expect(raw).toMatch(/\r\nratelimit: "address";r=11;t=\d+\r\n/i);
  });
});

describe('over the limit', () => {
  it('a client gets 429 with Retry-After, in the negotiated format, and others go on', async () => {
    const client = await newClient();
    const auth = clientAuth(client);
    for (let i = 0; i < CLIENT_LIMIT; i++) expect((await h.http(PAL, { auth })).status).toBe(200);
    const limited = expectLimited(await h.http(PAL, { auth }));
    expect(limited.policy).toBe('client');
    expectLimited(await h.http(PAL, { auth, accept: 'application/json' }), 'json');
    // Every kind of operation, and its body is not read.
    expectLimited(
      await h.http('/services/rest/transactions', {
        auth,
        body: new URLSearchParams({ palId: 'bare' }),
      }),
    );
    // From another address too: the count is the client's.
    expectLimited(await h.fromAddress('127.0.0.22', PAL, { auth }));
    // Another client of the same enterprise, and another tenant, are not slowed down.
    expect((await h.http(PAL, { auth: clientAuth(await newClient()) })).status).toBe(200);
    expect((await h.http('/services/rest/pals/globex-secret', { auth: h.b })).status).toBe(200);
  });

  it('an address without valid credentials gets 429; a client behind it still gets in', async () => {
    const from = '127.0.0.23';
    for (let i = 0; i < ADDRESS_LIMIT; i++)
      expect((await h.fromAddress(from, PAL, { auth: basic(`guess-${i}`, 'x') })).status).toBe(401);
    const limited = expectLimited(await h.fromAddress(from, PAL, { auth: null }));
    expect(limited.policy).toBe('address');
    // A wrong secret for a real client is refused before it is counted as a failed sign-in.
    const client = await newClient();
    expectLimited(await h.fromAddress(from, PAL, { auth: basic(client.username, 'wrong') }));
    const failures = await h.domain.db
      .selectFrom('sign_in_failures')
      .select('username')
      .where('username', '=', client.username)
      .execute();
    expect(failures).toEqual([]);
    // Pages from that address too, and addresses the router refuses.
    expectLimited(await h.fromAddress(from, '/services/session', { auth: null }));
    expectLimited(await h.fromAddress(from, '/services/rest/pals/%zz', { auth: null }));
    // A browser asking for a page over the limit gets a page, with the same fields.
    for (const path of ['/services/session', '/services/enter/x', '/services/enter/%zz']) {
      const page = await h.fromAddress(from, path, { auth: null, accept: 'text/html' });
      expect([page.status, page.type], path).toEqual([429, 'text/html; charset=utf-8']);
      expect(page.text).toContain('Try again in');
      expect(Number(page.headers.get('Retry-After'))).toBeGreaterThan(0);
      expect(standing(page).r).toBe(0);
    }
    // The right secret counts against its client, not the address.
    const ok = await h.fromAddress(from, PAL, { auth: clientAuth(client) });
    expect(ok.status).toBe(200);
    expect(standing(ok).policy).toBe('client');
    // Other addresses are not slowed down.
    expect((await h.fromAddress('127.0.0.24', PAL, { auth: null })).status).toBe(401);
  });
});

describe('the contract', () => {
  type Response = { $ref?: string; headers?: Record<string, unknown> };
  const doc = openApiDocument as unknown as {
    paths: Record<
      string,
      Record<string, { operationId: string; responses: Record<string, Response> }>
    >;
    components: { responses: Record<string, Response> };
  };
  const resolve = (r: Response): Response =>
    r.$ref ? doc.components.responses[r.$ref.replace('#/components/responses/', '')]! : r;
  const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));

  it('declares RateLimit-Policy and RateLimit on every answer, and 429 with Retry-After', () => {
    expect(operations).toHaveLength(27);
    for (const operation of operations) {
      expect(Object.keys(operation.responses)).toContain('429');
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = Object.keys(resolve(response).headers ?? {});
        expect(headers, `${operation.operationId} ${status}`).toEqual(
          expect.arrayContaining(['RateLimit-Policy', 'RateLimit']),
        );
        if (status === '429') expect(headers).toContain('Retry-After');
      }
    }
  });

  it('declares 403 FORBIDDEN on C6, the console token', () => {
    const c6 = operations.find((o) => o.operationId === 'createConsoleToken')!;
    expect(c6.responses['403']?.$ref).toBe('#/components/responses/Forbidden');
  });
});

describe('addressKey', () => {
  it('counts IPv4 by address and IPv6 by its /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0DB8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });
});

describe('two app instances on one database', () => {
  let other: { app: FastifyInstance; domain: WorkflowContext; url: string };
  beforeAll(async () => {
    // A second node: its own connection pool, caches and rate counts, on the same database.
    const db = openDatabase(h.config);
    const domain = createWorkflowContext({ db, config: h.config, log: pino({ level: 'silent' }) });
    const app = await buildApp(domain, { logger: false });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    other = { app, domain, url };
  });
  afterAll(async () => {
    await other?.app.close();
    other?.domain.mailer.close();
    await other?.domain.db.destroy();
  });

  const onOther = async (auth: string) => {
    const response = await fetch(other.url + PAL, { headers: { Authorization: auth } });
    return {
      status: response.status,
      type: response.headers.get('Content-Type') ?? '',
      headers: response.headers,
      text: await response.text(),
    };
  };

  it.runIf(engine === 'postgres')('share the count on PostgreSQL', async () => {
    const client = await newClient();
    const auth = clientAuth(client);
    const seen: number[] = [];
    for (let i = 0; i < CLIENT_LIMIT; i++) {
      const answer = i % 2 ? await onOther(auth) : await h.http(PAL, { auth });
      expect(answer.status).toBe(200);
      seen.push(standing(answer).r);
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    expectLimited(await h.http(PAL, { auth }));
    expectLimited(await onOther(auth));
    // The counts are in an unlogged table: not worth a WAL write each.
    const { rows } = await sql<{
      relpersistence: string;
    }>`select relpersistence from pg_class where relname = 'rate_limits'`.execute(h.domain.db);
    expect(rows).toEqual([{ relpersistence: 'u' }]);
  });

  it.runIf(engine === 'postgres')(
    'let exactly the quota through when both nodes take a burst at once',
    async () => {
      const client = await newClient();
      const auth = clientAuth(client);
      // One request on each node first, so that each knows the secret: the burst's requests then
      // reach the count together instead of one by one behind the hash check.
      expect(standing(await h.http(PAL, { auth })).r).toBe(CLIENT_LIMIT - 1);
      expect(standing(await onOther(auth)).r).toBe(CLIENT_LIMIT - 2);
      // Four times the quota, half on each node, all at once: however each node's requests queue
      // behind its upsert on the way (the next test shows the batching), the sum stays exact.
      const answers = await Promise.all(
        Array.from({ length: 4 * CLIENT_LIMIT }, (_, i) =>
          i % 2 ? onOther(auth) : h.http(PAL, { auth }),
        ),
      );
      const passed = answers.filter((a) => a.status === 200);
      expect(passed.map((a) => standing(a).r).sort()).toEqual([0, 1, 2]);
      for (const refused of answers.filter((a) => a.status !== 200)) expectLimited(refused);
    },
  );

  it.runIf(engine === 'postgres')(
    'send one upsert at a time a key: those that come meanwhile go together in the next',
    async () => {
      const limits = new RateLimits(h.config.rateLimits, openRateCountPool(h.config.database));
      try {
        const shared = limits.shared!.client;
        const key = `batch-${Date.now()}`;
        const counted = await Promise.all(Array.from({ length: 8 }, () => shared.consume(key)));
        // The first went alone; the seven behind it in one upsert of seven points.
        expect(shared.sent).toBe(2);
        expect(counted.map((c) => [c.remaining, c.over])).toEqual([
          [4, false],
          [3, false],
          [2, false],
          [1, false],
          [0, false],
          [0, true],
          [0, true],
          [0, true],
        ]);
        const { rows } = await sql<{ points: number }>`
          select points from rate_limits where key = ${`client:${key}`}`.execute(h.domain.db);
        expect(rows).toEqual([{ points: 8 }]);
        // Over its limit, the key is refused from this node's memory: every request of the batch,
        // without a query (the count stays).
        const refused = await Promise.all([1, 2, 3].map(() => shared.consume(key)));
        expect(refused.map((c) => [c.remaining, c.over])).toEqual([
          [0, true],
          [0, true],
          [0, true],
        ]);
        const after = await sql<{ points: number }>`
          select points from rate_limits where key = ${`client:${key}`}`.execute(h.domain.db);
        expect(after.rows).toEqual([{ points: 8 }]);
      } finally {
        await limits.close();
      }
    },
  );

  it.runIf(engine === 'sqlite')(
    'count each on its own on SQLite (each process in memory)',
    async () => {
      const client = await newClient();
      const auth = clientAuth(client);
      for (let i = 0; i < CLIENT_LIMIT; i++) expect((await h.http(PAL, { auth })).status).toBe(200);
      expectLimited(await h.http(PAL, { auth }));
      const fresh = await onOther(auth);
      expect(fresh.status).toBe(200);
      expect(standing(fresh).r).toBe(CLIENT_LIMIT - 1);
    },
  );
});

describe('behind a proxy (TRUST_PROXY)', () => {
  let proxied: Harness;
  beforeAll(async () => {
    proxied = await startHarness({
      env: { RATE_LIMIT_ADDRESS_REQUESTS: '3', TRUST_PROXY: '127.0.0.30' },
    });
  });
  afterAll(() => proxied?.close());

  const through = (localAddress: string, forwardedFor: string, path = PAL) =>
    proxied.fromAddress(localAddress, path, {
      auth: null,
      headers: { 'X-Forwarded-For': forwardedFor },
    });

  it('counts the address the trusted proxy forwarded, and ignores anyone else’s X-Forwarded-For', async () => {
    // Through the proxy: each person has a count of their own.
    for (let i = 0; i < 3; i++)
      expect((await through('127.0.0.30', '198.51.100.1')).status).toBe(401);
    expectLimited(await through('127.0.0.30', '198.51.100.1'));
    expect((await through('127.0.0.30', '198.51.100.2')).status).toBe(401);
    // Not through it: the forged header is ignored, the socket's address counts.
    for (let i = 0; i < 3; i++)
      expect((await through('127.0.0.31', `203.0.113.${i}`)).status).toBe(401);
    expectLimited(await through('127.0.0.31', '203.0.113.99'));
  });

  it('counts an address the router refuses by the forwarded address too', async () => {
    const refused = '/services/rest/pals/%zz';
    for (let i = 0; i < 3; i++)
      expect((await through('127.0.0.30', '198.51.100.3', refused)).status).toBe(400);
    expectLimited(await through('127.0.0.30', '198.51.100.3', refused));
    // Another person behind the same proxy is not held back by it.
    const other = await through('127.0.0.30', '198.51.100.4', refused);
    expect(other.status).toBe(400);
    expect(standing(other).r).toBe(2);
  });
});
