// Two real `pal serve` processes on one PostgreSQL database, as two machines behind a proxy would
// run them: each its own pool, caches and DATA_DIR, sharing only DATABASE_URL and PAL_SECRET_KEY.
// The test process itself works on the database as a third party would (the CLI, another node).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createClient, deleteClient, type NewApiClient } from '../src/domain/clients.js';
import { createWorkflowContext, type WorkflowContext } from '../src/workflows/context.js';
import { createEnterprise } from '../src/domain/enterprises.js';
import { deployPal } from '../src/domain/pals.js';
import { connectDatabase } from '../src/storage/database.js';
import { POSTGRES_CHANGE_BOUND_MS } from '../src/storage/postgres.js';
import { engine, freshDatabaseEnv } from './engine.js';
import { basic } from './harness.js';
import { tempDir, TEST_SECRET_KEY } from './helpers.js';
import { serve, type ServerProcess } from './serve-process.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const PUBLIC_URL = 'https://pal.example.test';

type Node = ServerProcess;

/** The .eml files the nodes wrote, once there are `count` of them (the outbox sends after commit). */
async function mailFiles(nodes: Node[], count: number): Promise<string[]> {
  for (let i = 0; ; i++) {
    const files = nodes.flatMap((node) => {
      const folder = join(node.dataDir, 'outbox');
      try {
        return readdirSync(folder)
          .filter((f) => f.endsWith('.eml'))
          .map((f) => join(folder, f));
      } catch {
        return [];
      }
    });
    if (files.length >= count || i >= 100) return files;
    await new Promise((done) => setTimeout(done, 50));
  }
}

describe.runIf(engine === 'postgres')('two pal serve processes on one PostgreSQL', () => {
  const dir = tempDir('pal-nodes-');
  let env: Record<string, string>;
  let ctx: WorkflowContext; // the test's own connection: a third party on the database
  let a: Node;
  let b: Node;
  let enterpriseId: string;
  let client: NewApiClient;
  beforeAll(async () => {
    env = {
      ...(await freshDatabaseEnv()),
      PAL_SECRET_KEY: TEST_SECRET_KEY,
      PUBLIC_URL,
      LOG_LEVEL: 'info',
    };
    const config = loadConfig({ ...env, DATA_DIR: join(dir.path, 'test') });
    const { db } = await connectDatabase(config);
    ctx = createWorkflowContext({ db, config, log: pino({ level: 'silent' }) });
    enterpriseId = (await createEnterprise(ctx, 'Acme Corp')).id;
    client = await createClient(ctx, enterpriseId);
    await deployPal(ctx, enterpriseId, join(FIXTURES, 'wf-tx'));
    [a, b] = await Promise.all([serve(env, join(dir.path, 'a')), serve(env, join(dir.path, 'b'))]);
  }, 120_000);
  afterAll(async () => {
    for (const node of [a, b]) {
      if (!node) continue;
      node.child.kill('SIGTERM');
      await node.exited;
    }
    ctx?.mailer.close();
    await ctx?.db.destroy();
    dir.remove();
  });

  const call = async (
    node: Node,
    path: string,
    options: { auth?: string; body?: URLSearchParams; json?: unknown } = {},
  ) => {
    const json = options.json === undefined ? undefined : JSON.stringify(options.json);
    const response = await fetch(`${node.url}${path}`, {
      method: options.body || json ? 'POST' : 'GET',
      headers: {
        authorization: options.auth ?? basic(client.username, client.password),
        accept: 'application/json',
        ...(json ? { 'content-type': 'application/json' } : {}),
      },
      body: options.body ?? json,
      redirect: 'manual',
    });
    const text = await response.text();
    return { status: response.status, text };
  };
  const afterBound = () => new Promise((resolve) => setTimeout(resolve, POSTGRES_CHANGE_BOUND_MS));

  it('a pal deployed by another process is served by both nodes within the bound', async () => {
    for (const node of [a, b])
      expect((await call(node, '/services/rest/pals/wf-console')).status).toBe(404); // cached
    await deployPal(ctx, enterpriseId, join(FIXTURES, 'wf-console'));
    await afterBound();
    for (const node of [a, b]) {
      const answer = await call(node, '/services/rest/pals/wf-console');
      expect(answer.status, answer.text).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ id: 'wf-console' });
    }
  });

  it('a client deleted by another process is refused by both nodes within the bound', async () => {
    const doomed = await createClient(ctx, enterpriseId);
    const auth = basic(doomed.username, doomed.password);
    for (const node of [a, b, a, b])
      expect((await call(node, '/services/rest/pals/wf-tx', { auth })).status).toBe(200);
    await deleteClient(ctx, enterpriseId, doomed.clientId);
    await afterBound();
    for (const node of [a, b])
      expect((await call(node, '/services/rest/pals/wf-tx', { auth })).status).toBe(401);
  });

  it('workflow runs on one transaction sent to both nodes at once lose no variable update', async () => {
    const created = await call(a, '/services/rest/transactions', {
      body: new URLSearchParams({ palId: 'wf-tx' }),
    });
    expect(created.status, created.text).toBe(200);
    const tx = JSON.parse(created.text) as string;
    const runs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(i % 2 ? b : a, `/services/rest/transactions/${tx}/runWorkflow`, {
          json: { postData: [{ name: 'step', value: 'count' }] },
        }),
      ),
    );
    // A run that finds the transaction's web-service workflow RUNNING on the other node answers
    // 409 (runs queue per transaction within one node only); none may fail otherwise.
    for (const run of runs) expect([200, 409], run.text).toContain(run.status);
    const results = runs
      .filter((r) => r.status === 200)
      .map((r) => JSON.parse(r.text) as { success: boolean; messages?: { message: string }[] });
    const succeeded = results.filter((r) => r.success);
    const counts = new Set(succeeded.map((r) => r.messages![0]!.message));
    // Every success saw a different count: none overwrote another's, whichever node ran it.
    expect(counts.size).toBe(succeeded.length);
    expect(succeeded.length).toBeGreaterThan(0);
    const view = await call(b, `/services/rest/transactions/${tx}/runWorkflow`, {
      json: { postData: [{ name: 'step', value: 'view' }] },
    });
    const seen = JSON.parse(
      (JSON.parse(view.text) as { messages: { message: string }[] }).messages[0]!.message,
    ) as { vars: Record<string, string> };
    expect(Number(seen.vars.count)).toBe(succeeded.length + 1); // + the view run's own
  });

  it('console runs of one pal sent to both nodes at once lose no variable update', async () => {
    // No RUNNING claim here: both nodes run at once, and the scope's version repeats the losers.
    const runs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(i % 2 ? b : a, '/services/rest/console/wf-console/runWorkflow', {
          json: { postData: [{ name: 'mode', value: 'vars' }] },
        }),
      ),
    );
    for (const run of runs) expect(run.status, run.text).toBe(200);
    const succeeded = runs
      .map((r) => JSON.parse(r.text) as { success: boolean; messages?: { message: string }[] })
      .filter((r) => r.success);
    const counts = new Set(succeeded.map((r) => r.messages![0]!.message));
    expect(counts.size).toBe(succeeded.length);
    expect(succeeded.length).toBeGreaterThan(0);
    // The last count is the number of successes: every one of them was kept.
    expect(counts).toContain(`count=${succeeded.length}`);
  });

  it('a session made on node A works on node B', async () => {
    // An SSO and a T5 token through A, redeemed on A, the session page read on B.
    const made = await call(a, '/services/rest/enterprises/sso', {
      body: new URLSearchParams({
        firstName: 'Nora',
        lastName: 'Node',
        email: 'nora@example.test',
      }),
    });
    expect(made.status, made.text).toBe(200);
    const sso = JSON.parse(made.text) as string;
    const created = await call(a, '/services/rest/transactions', {
      body: new URLSearchParams({ palId: 'wf-tx' }),
    });
    const tx = JSON.parse(created.text) as string;
    const token = await call(a, `/services/rest/transactions/${tx}/token`, {
      body: new URLSearchParams({ userSSO: sso }),
    });
    expect(token.status, token.text).toBe(200);
    const entered = await fetch(`${a.url}/services/enter/${JSON.parse(token.text) as string}`, {
      redirect: 'manual',
    });
    await entered.arrayBuffer();
    expect(entered.status).toBe(303);
    const cookie = (entered.headers.get('set-cookie') ?? '').split(';')[0]!;
    const onB = await fetch(b.url + entered.headers.get('location')!, { headers: { cookie } });
    const page = await onB.text();
    expect(onB.status).toBe(200);
    expect(page).toContain('participant');
  });

  it('an invitation accepted through both nodes at once is accepted exactly once', async () => {
    const other = await createEnterprise(ctx, 'Beta Ltd');
    const otherClient = await createClient(ctx, other.id);
    const email = 'ivy@people.example.test';
    const registered = await call(b, '/services/rest/enterprises/sso', {
      auth: basic(otherClient.username, otherClient.password),
      body: new URLSearchParams({ firstName: 'Ivy', lastName: 'Invitee', email }),
    });
    expect(registered.status, registered.text).toBe(200);
    const invited = await call(a, '/services/rest/enterprises/sso/invite', {
      body: new URLSearchParams({ email }),
    });
    expect(invited.status, invited.text).toBe(200);
    const sso = JSON.parse(invited.text) as string;
    // MAIL_URL is unset: the node whose dispatcher took the mail wrote it to its DATA_DIR/outbox.
    const files = await mailFiles([a, b], 1);
    expect(files).toHaveLength(1);
    const mail = await simpleParser(readFileSync(files[0]!));
    const path = /\/services\/invitations\/[A-Za-z0-9_-]{43}/.exec(mail.text ?? '')?.[0];
    expect(path, mail.text).toBeDefined();

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${(i % 2 ? b : a).url}${path}`, {
          method: 'POST',
          headers: { accept: 'text/html' },
        }),
      ),
    );
    const texts = await Promise.all(answers.map((r) => r.text()));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 410)).toHaveLength(19);
    expect(texts.filter((t) => t.includes('Invitation accepted'))).toHaveLength(1);
    const status = await call(b, `/services/rest/enterprises/sso/status?sso=${sso}`);
    expect(status.status, status.text).toBe(200);
    expect(JSON.parse(status.text)).toBe('ACTIVE');
  });
});
