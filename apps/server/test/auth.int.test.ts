// BASIC authentication over real HTTP (docs/decisions.md, "Errors" and "Tenancy and
// authentication"): missing, wrong, unknown and malformed credentials answer 401 with
// `WWW-Authenticate: Basic realm="pal"` and an errorResult, before anything happens; the
// failed-attempt throttle answers a client's wrong attempts 429 with Retry-After after
// AUTH_THROTTLE.maxFailures failures of its username from one address, still accepts the right
// secret (no lockout by a neighbour), is per (username, address), writes nothing for a throttled
// pair, and answers a username that is nobody's alike (counted in memory, not written).
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/domain/clients.js';
import { AUTH_THROTTLE } from '../src/http/sign-in-throttle.js';
import { basic, expectError, form, startHarness, type Answer, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const ROOT = '/services/rest';
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** Requests of every kind: a GET, a search, a form POST and a body POST (the body is never read). */
const requests = (): {
  path: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams;
}[] => [
  { path: `${ROOT}/pals/expense-approval` },
  { path: `${ROOT}/pals`, headers: { name: 'expense' } },
  { path: `${ROOT}/transactions`, body: form({ palId: 'leave-request' }) },
  {
    path: `${ROOT}/enterprises/sso`,
    body: form({ firstName: 'Eve', lastName: 'Il', email: 'eve@example.test' }),
  },
  {
    path: `${ROOT}/console/leave-request/runWorkflow`,
    headers: { 'Content-Type': 'application/json' },
    body: '{"postData": [{"name": "a", "value": "b"}]}',
  },
];

describe('401 for missing, wrong, unknown and malformed credentials', () => {
  // Failures of h.a's username count towards its throttle: a success after each one clears it.
  // Unknown usernames get a fresh name each time for the same reason.
  let n = 0;
  const bad = () => {
    const { username, password } = h.a;
    n += 1;
    return [
      ['missing', null],
      ['empty', ''],
      ['wrong password', basic(username, `${password}x`)],
      ['another client’s password', basic(username, h.b.password)],
      ['password with a trailing blank', basic(username, `${password} `)],
      ['a very long password', basic(username, 'p'.repeat(5000))],
      ['unknown user', basic(`nobody-${n}`, password)],
      ['a username that cannot exist', basic(`no body/${n}`, password)],
      ['empty username', basic('', password)],
      ['no colon', `Basic ${b64(`${username}${password}`)}`],
      ['not base64', 'Basic !!!'],
      ['no credentials after the scheme', 'Basic'],
      ['Bearer', 'Bearer x'],
      ['Digest', `Digest username="${username}"`],
      ['two schemes', `${basic(username, password)}, Bearer x`],
      // Node's decoder skips what follows the padding: the right credentials, and more.
      ['bytes after the padding', `Basic ${b64(`${username}:${password}`)}==QUFB`],
    ] as const;
  };

  it('answers 401 with WWW-Authenticate: Basic realm="pal" and an errorResult, XML or JSON', async () => {
    for (const [what] of bad()) {
      for (const request of requests()) {
        for (const format of ['xml', 'json'] as const) {
          const auth = bad().find(([w]) => w === what)![1];
          const answer = await h.http(request.path, {
            auth,
            headers: request.headers,
            body: request.body,
            accept: format === 'json' ? 'application/json' : undefined,
          });
          expectError(answer, 401, 'UNAUTHORIZED', format);
          expect(answer.headers.get('WWW-Authenticate'), `${what} ${request.path}`).toBe(
            'Basic realm="pal"',
          );
          expect((await h.http(`${ROOT}/pals/bare`, { auth: h.a })).status).toBe(200);
        }
      }
    }
  });

  // Node keeps the first of several lines; a proxy in front may have judged the last.
  it('refuses two Authorization lines with 400, in either order, and does nothing', async () => {
    const lines = (values: string[]) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          `${h.url}${ROOT}/transactions`,
          {
            method: 'POST',
            headers: {
              Authorization: values,
              Accept: 'application/json',
              'Content-Type': 'application/x-www-form-urlencoded',
            },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on('error', reject);
        req.end('palId=leave-request');
      });
    const right = h.a.authorization;
    const other = basic(h.b.username, h.b.password);
    for (const values of [
      [right, other],
      [other, right],
      [right, right],
    ]) {
      const answer = await lines(values);
      expect(answer.status, answer.text).toBe(400);
      expect(answer.text).toContain('Authorization: given more than once');
    }
    // The next test checks that the refused ones created nothing.
    expect((await h.http(`${ROOT}/pals/bare`, { auth: right })).status).toBe(200);
  });

  it('did nothing for the refused requests', async () => {
    // The refused T1 and E1 above created no transaction and no account.
    expect(await h.a.json.transactions.searchTransactions({ includeTest: true })).toEqual([]);
    expect(await h.a.json.enterprise.isEmailRegistered({ email: 'eve@example.test' })).toBe(false);
  });

  it('accepts the right credentials, with the scheme in any case, through the client in both formats', async () => {
    expect(
      (
        await h.http(`${ROOT}/pals/bare`, {
          auth: `basic ${b64(`${h.a.username}:${h.a.password}`)}`,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await h.http(`${ROOT}/pals/bare`, {
          auth: `BASIC  ${b64(`${h.a.username}:${h.a.password}`)}`,
        })
      ).status,
    ).toBe(200);
    for (const format of ['json', 'xml'] as const) {
      expect((await h.a[format].pals.getPal({ id: 'bare' })).id).toBe('bare');
      const intruder = h.client({ username: h.a.username, password: 'wrong' }, format);
      const error = (await intruder.pals.getPal({ id: 'bare' }).catch((e: unknown) => e)) as {
        status: number;
        code: string;
        response: Response;
      };
      expect([error.status, error.code]).toEqual([401, 'UNAUTHORIZED']);
      expect(error.response.headers.get('WWW-Authenticate')).toBe('Basic realm="pal"');
    }
  });

  it('needs no credentials for /healthz, /openapi.json and /docs, and no others', async () => {
    for (const path of ['/healthz', '/openapi.json', '/docs'])
      expect((await h.http(path, { auth: null })).status, path).toBe(200);
    for (const path of [
      `${ROOT}/pals`,
      `${ROOT}/console/consolePalList`,
      `${ROOT}/transactions`,
      `${ROOT}/enterprises/sso/registered?email=a%40b.test`,
    ])
      expectError(await h.http(path, { auth: null }), 401, 'UNAUTHORIZED');
  });
});

describe('the failed-attempt throttle', () => {
  const { maxFailures, windowSeconds } = AUTH_THROTTLE;
  const path = `${ROOT}/pals/bare`;

  async function newClient() {
    return createClient(h.domain, h.a.enterpriseId);
  }

  function expectThrottled(answer: Answer, format: 'xml' | 'json' = 'xml') {
    expectError(answer, 429, 'RATE_LIMITED', format);
    const retryAfter = answer.headers.get('Retry-After');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeLessThanOrEqual(windowSeconds);
    // As every 429: nothing left, and the same wait as Retry-After, under the policy that refused
    // it (the address's own count may allow more; its window is shorter than the wait).
    expect(answer.headers.get('RateLimit-Policy')).toBe(
      `"sign-in";q=${maxFailures};w=${windowSeconds}`,
    );
    expect(answer.headers.get('RateLimit')).toBe(`"sign-in";r=0;t=${retryAfter}`);
  }

  it(`answers wrong attempts 429 with Retry-After after ${maxFailures} failures of one username from one address, and still accepts the right secret`, async () => {
    expect(maxFailures).toBeGreaterThan(1);
    const client = await newClient();
    const wrong = basic(client.username, 'wrong');
    const right = basic(client.username, client.password);
    for (let i = 1; i <= maxFailures; i++) {
      const answer = await h.http(path, { auth: wrong });
      expect(answer.status, `failure ${i}`).toBe(401);
    }
    expectThrottled(await h.http(path, { auth: wrong }));
    expectThrottled(await h.http(path, { auth: wrong, accept: 'application/json' }), 'json');
    // Every kind of operation, and a forged X-Forwarded-For changes nothing.
    expectThrottled(
      await h.http(`${ROOT}/transactions`, { auth: wrong, body: form({ palId: 'leave-request' }) }),
    );
    expectThrottled(
      await h.http(path, { auth: wrong, headers: { 'X-Forwarded-For': '203.0.113.9' } }),
    );
    // The refused T1 created nothing.
    expect(await h.a.json.transactions.searchTransactions({ palId: 'leave-request' })).toEqual([]);
    // The same username from another address is not throttled.
    expect((await h.fromAddress('127.0.0.2', path, { auth: wrong })).status).toBe(401);
    // Anyone behind the same address cannot lock the client out: its secret still works.
    expect((await h.http(path, { auth: right })).status).toBe(200);
    expect((await h.http(path, { auth: h.a })).status).toBe(200);
  });

  it('a throttled pair is let in with the right secret whether or not it was verified before', async () => {
    const client = await newClient();
    const right = basic(client.username, client.password);
    expect((await h.http(path, { auth: right })).status).toBe(200); // now in the verified cache
    const wrong = basic(client.username, 'wrong');
    for (let i = 1; i <= maxFailures; i++) await h.http(path, { auth: wrong });
    expectThrottled(await h.http(path, { auth: wrong }));
    expect((await h.http(path, { auth: right })).status).toBe(200);
    const fresh = await newClient();
    const freshWrong = basic(fresh.username, 'wrong');
    for (let i = 1; i <= maxFailures; i++) await h.http(path, { auth: freshWrong });
    expectThrottled(await h.http(path, { auth: freshWrong }));
    expect((await h.http(path, { auth: basic(fresh.username, fresh.password) })).status).toBe(200);
  });

  it('a success clears the count', async () => {
    const client = await newClient();
    const wrong = basic(client.username, 'wrong');
    const right = basic(client.username, client.password);
    for (let i = 1; i < maxFailures; i++)
      expect((await h.http(path, { auth: wrong })).status).toBe(401);
    expect((await h.http(path, { auth: right })).status).toBe(200);
    for (let i = 1; i < maxFailures; i++)
      expect((await h.http(path, { auth: wrong })).status).toBe(401);
    expect((await h.http(path, { auth: right })).status).toBe(200);
    for (let i = 1; i <= maxFailures; i++)
      expect((await h.http(path, { auth: wrong })).status).toBe(401);
    expectThrottled(await h.http(path, { auth: wrong }));
    expect((await h.http(path, { auth: right })).status).toBe(200);
    expect((await h.http(path, { auth: wrong })).status).toBe(401);
  });

  it("writes a throttled pair's failures no more: its count stops at the limit + 1", async () => {
    const client = await newClient();
    const wrong = basic(client.username, 'wrong');
    for (let i = 1; i <= maxFailures; i++) await h.http(path, { auth: wrong });
    for (let i = 0; i < 20; i++) expectThrottled(await h.http(path, { auth: wrong }));
    const rows = await h.domain.db
      .selectFrom('sign_in_failures')
      .select('failures')
      .where('username', '=', client.username)
      .execute();
    expect(rows).toEqual([{ failures: maxFailures + 1 }]);
  });

  it('answers a username that is nobody’s as it answers a client’s: 429 after as many failures, and no row written', async () => {
    const count = () =>
      h.domain.db
        .selectFrom('sign_in_failures')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.n));
    const before = await count();
    // Nothing tells a stranger whether the username exists: the same 401s, then the same 429.
    const ghost = basic('ghost-user', 'whatever');
    for (let i = 1; i <= maxFailures; i++)
      expect((await h.http(path, { auth: ghost })).status, `failure ${i}`).toBe(401);
    expectThrottled(await h.http(path, { auth: ghost }));
    expectThrottled(await h.http(path, { auth: ghost, accept: 'application/json' }), 'json');
    // Per address, as a client's; other usernames are counted apart.
    expect((await h.fromAddress('127.0.0.2', path, { auth: ghost })).status).toBe(401);
    for (let i = 0; i < 10; i++)
      expect((await h.http(path, { auth: basic(`nobody-${i}`, 'x') })).status).toBe(401);
    // Counted in memory only: a durable write per guess would let anyone slow every tenant down.
    expect(await count()).toBe(before);
  });
});
