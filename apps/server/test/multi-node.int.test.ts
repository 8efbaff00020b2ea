// Two server nodes on one PostgreSQL database, as behind a load balancer: each its own process
// state (pool, read cache, credentials cache), sharing only the database. In one test process
// here; the storage they rely on is the same as between two machines.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, deleteClient } from '../src/domain/clients.js';
import { buildPalPackage } from '../src/domain/pal-manifest.js';
import { deployPal, deployPalPackage } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { issueTransactionToken } from '../src/domain/tokens.js';
import { startServer, type RunningServer } from '../src/server.js';
import { AUTH_THROTTLE } from '../src/http/sign-in-throttle.js';
import { expireDueTransactions } from '../src/domain/transactions.js';
import { dialectOf } from '../src/storage/adapter-dialect.js';
import { engine } from './engine.js';
import { basic, startHarness, type Harness } from './harness.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');

describe.runIf(engine === 'postgres')('two nodes on one PostgreSQL', () => {
  let h: Harness; // node A, which also made the tenants
  let b: RunningServer;
  let sso: string;
  beforeAll(async () => {
    h = await startHarness();
    b = await startServer(h.config, { logger: false });
    await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, 'wf-tx'));
    sso = await createSso(h.domain, h.a.enterpriseId, {
      firstName: 'Nora',
      lastName: 'Node',
      email: 'nora@example.test',
    });
  });
  afterAll(async () => {
    await b?.close();
    await h?.close();
  });

  const getPalName = async (url: string) => {
    const response = await fetch(`${url}/services/rest/pals/bare`, {
      headers: { authorization: h.a.authorization, accept: 'application/json' },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { name?: string }).name;
  };

  it('a pal deployed through node A is served by node B within the documented bound', async () => {
    expect(await getPalName(b.url)).toBeUndefined(); // now in B's read cache
    expect(await getPalName(b.url)).toBeUndefined();
    await deployPalPackage(
      h.domain,
      h.a.enterpriseId,
      await buildPalPackage({ id: 'bare', name: 'Redeployed on A' }, {}),
    );
    expect(await getPalName(h.url)).toBe('Redeployed on A'); // A: its own write, at once
    await new Promise((resolve) => setTimeout(resolve, dialectOf(b.domain.db).changeStampBoundMs));
    expect(await getPalName(b.url)).toBe('Redeployed on A');
  });

  it('a client deleted through node A is refused by node B within the documented bound', async () => {
    const client = await createClient(h.domain, h.a.enterpriseId);
    const auth = basic(client.username, client.password);
    const status = async (url: string) => {
      const response = await fetch(`${url}/services/rest/pals/bare`, {
        headers: { authorization: auth },
      });
      await response.arrayBuffer();
      return response.status;
    };
    expect(await status(b.url)).toBe(200); // now in B's verified-credentials cache
    expect(await status(b.url)).toBe(200);
    await deleteClient(h.domain, h.a.enterpriseId, client.clientId);
    expect(await status(h.url)).toBe(401); // A: its own change, at once
    // Far sooner than CLIENT_CACHE_TTL_MS (10 s): the change stamp, not the cache's age, tells B.
    await new Promise((resolve) => setTimeout(resolve, dialectOf(b.domain.db).changeStampBoundMs));
    expect(await status(b.url)).toBe(401);
  });

  it('the failed sign-in throttle counts attempts made on both nodes together', async () => {
    const client = await createClient(h.domain, h.a.enterpriseId);
    const status = async (url: string, password: string, username = client.username) => {
      const response = await fetch(`${url}/services/rest/pals/bare`, {
        headers: { authorization: basic(username, password) },
      });
      await response.arrayBuffer();
      return response.status;
    };
    // Alternating: neither node alone sees more than half of the limit.
    for (let i = 0; i < AUTH_THROTTLE.maxFailures; i++)
      expect(await status(i % 2 ? b.url : h.url, 'wrong'), `failure ${i + 1}`).toBe(401);
    expect(await status(h.url, 'wrong')).toBe(429);
    expect(await status(b.url, 'wrong')).toBe(429);
    // The right secret is still accepted, on both.
    expect(await status(b.url, client.password)).toBe(200);
    expect(await status(h.url, client.password)).toBe(200);
    // Any text as a username is a 401, never a database error (PostgreSQL's text refuses NUL).
    for (const odd of ['nul\u0000name', 'x'.repeat(6000)])
      expect(await status(b.url, 'wrong', odd)).toBe(401);
  });

  it('of 200 redeemers of one token spread over both nodes, exactly one wins (20 rounds)', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    for (let round = 0; round < 20; round++) {
      const token = await issueTransactionToken(h.domain, h.a.enterpriseId, tx, sso, 'participant');
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          fetch(`${i % 2 ? b.url : h.url}/services/enter/${token}`, { redirect: 'manual' }),
        ),
      );
      await Promise.all(answers.map((a) => a.arrayBuffer()));
      const statuses = answers.map((a) => a.status);
      expect(
        statuses.filter((s) => s === 303),
        `round ${round}`,
      ).toHaveLength(1);
      expect(statuses.filter((s) => s === 410)).toHaveLength(199);
    }
  });

  it('a browser session made on node A works on node B', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const token = await issueTransactionToken(h.domain, h.a.enterpriseId, tx, sso, 'participant');
    const entered = await fetch(`${h.url}/services/enter/${token}`, { redirect: 'manual' });
    await entered.arrayBuffer();
    expect(entered.status).toBe(303);
    const cookie = (entered.headers.get('set-cookie') ?? '').split(';')[0]!;
    const onB = await fetch(b.url + entered.headers.get('location')!, { headers: { cookie } });
    const page = await onB.text();
    expect(onB.status).toBe(200);
    expect(page).toContain('participant');
    const without = await fetch(b.url + entered.headers.get('location')!, { redirect: 'manual' });
    await without.arrayBuffer();
    expect(without.status).not.toBe(200);
  });

  it('the expiry sweep runs on one node at a time, and each due transaction moves once', async () => {
    // Five transactions whose executeEndDate has passed (as the sweep would find them).
    const due: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
      due.push(id);
    }
    await h.domain.db
      .updateTable('transactions')
      .set({ execute_end_date: new Date(Date.now() - 60_000).toISOString() })
      .where('id', 'in', due)
      .execute();
    // Both nodes start their sweep at once, as their timers would: the one that gets the lock
    // sweeps, the other skips this round.
    const sweep = (node: { db: typeof h.domain.db }, domain: typeof h.domain) =>
      dialectOf(node.db).runExclusively(node.db, 'expiry-sweep', async () => {
        const moved = await expireDueTransactions(domain);
        await new Promise((resolve) => setTimeout(resolve, 200)); // hold the lock a while
        return moved;
      });
    const [onA, onB] = await Promise.all([sweep(h.domain, h.domain), sweep(b.domain, b.domain)]);
    const ran = [onA, onB].filter((r) => r !== undefined);
    expect(ran).toHaveLength(1);
    expect(ran[0]!.expired).toBe(5);
    const statuses = await h.domain.db
      .selectFrom('transactions')
      .select('system_status')
      .where('id', 'in', due)
      .execute();
    expect(statuses.every((row) => row.system_status === 'EXPIRED')).toBe(true);
    // The next round, on either node, finds nothing left to move.
    expect((await sweep(b.domain, b.domain))?.expired).toBe(0);
  });
});
