// The service around the operations, on a server with its own SERVICE_ROOT and USER_ROOT:
// /healthz, /openapi.json (the bundled document with the configured roots and PUBLIC_URL), /docs,
// request ids, and the operations (and the invitation pages) under the configured roots only.
import { operations, type OperationId } from '@pal-workflow/server-skeleton';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, PALS_A, PUBLIC_URL, startHarness, type Harness } from './harness.js';

const SERVICE_ROOT = 'pal-api';
const USER_ROOT = 'people';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { SERVICE_ROOT, USER_ROOT } });
});
afterAll(() => h?.close());

interface OpenApi {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, { operationId?: string }>>;
}

describe('/healthz, /openapi.json and /docs', () => {
  it('/healthz answers 200 without credentials', async () => {
    const answer = await h.http('/healthz', { auth: null });
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^application\/json/);
    expect(JSON.parse(answer.text)).toEqual({ status: 'ok' });
  });

  it('/openapi.json serves the bundled document with the configured roots and PUBLIC_URL', async () => {
    const answer = await h.http('/openapi.json', { auth: null });
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^application\/json/);
    const doc = JSON.parse(answer.text) as OpenApi;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.servers).toEqual([{ url: PUBLIC_URL }]);
    for (const path of Object.keys(doc.paths))
      expect(path, path).toMatch(new RegExp(`^/(${SERVICE_ROOT}|${USER_ROOT})/`));
    // Every operation of the route table, under its root, with its method.
    const ids = Object.keys(operations) as OperationId[];
    expect(ids).toHaveLength(27);
    for (const id of ids) {
      const spec = operations[id];
      const path = `/${spec.root === 'service' ? SERVICE_ROOT : USER_ROOT}${spec.path.replace(/:([A-Za-z]+)/g, '{$1}')}`;
      const item = doc.paths[path];
      expect(item, `${spec.specId} ${path}`).toBeDefined();
      expect(
        item![spec.method.toLowerCase()]?.operationId,
        `${spec.specId} ${spec.method} ${path}`,
      ).toBe(id);
    }
    const count = Object.values(doc.paths).reduce(
      (n, item) =>
        n +
        Object.keys(item).filter((k) => ['get', 'post', 'put', 'delete', 'patch'].includes(k))
          .length,
      0,
    );
    expect(count).toBe(27);
  });

  it('/docs answers 200 with an HTML reference page, whose document has the same roots', async () => {
    const docs = await h.http('/docs', { auth: null });
    expect(docs.status).toBe(200);
    expect(docs.type).toMatch(/^text\/html/);
    expect(docs.text).toMatch(/swagger/i);
    const json = await h.http('/docs/json', { auth: null });
    expect(json.status).toBe(200);
    const served = JSON.parse(json.text) as OpenApi;
    expect(Object.keys(served.paths).sort()).toEqual(
      Object.keys(
        (JSON.parse((await h.http('/openapi.json', { auth: null })).text) as OpenApi).paths,
      ).sort(),
    );
  });
});

describe('the configured roots', () => {
  it('the generated client, told the roots, works in both formats', async () => {
    const start = h.exchanges.length;
    for (const client of [h.a.json, h.a.xml]) {
      expect((await client.pals.getPal({ id: 'leave-request' })).name).toBe('Leave Request');
      const tx = await client.transactions.createTransaction({ palId: 'leave-request' });
      expect((await client.transactions.getTransaction({ id: tx })).id).toBe(tx);
    }
    const paths = h.exchanges.slice(start).map((e) => e.path);
    expect(paths).toHaveLength(6);
    for (const path of paths) expect(path).toMatch(new RegExp(`^/${SERVICE_ROOT}/rest/`));
    const answer = await h.http(`/${SERVICE_ROOT}/rest/pals/bare`);
    expect(answer.status).toBe(200);
  });

  it('the default roots are unknown paths; the user service lives under USER_ROOT', async () => {
    expectError(await h.http('/services/rest/pals/bare'), 404, 'NOT_FOUND');
    expectError(
      await h.http('/services/rest/transactions', {
        body: new URLSearchParams({ palId: 'leave-request' }),
      }),
      404,
      'NOT_FOUND',
    );
    expectError(await h.http('/user/runWorkflow?action=a', { method: 'POST' }), 404, 'NOT_FOUND');
    expect(
      expectError(
        await h.http(`/${USER_ROOT}/runWorkflow?action=a&workflow=w`, { method: 'POST' }),
        404,
        'NOT_FOUND',
      ),
    ).toEqual(['pal "w" not found']);
    expectError(
      await h.http(`/${USER_ROOT}/runWorkflow?action=a`, { method: 'POST', auth: null }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('invitation pages live under SERVICE_ROOT', async () => {
    const token = 'B'.repeat(43);
    expect((await h.http(`/${SERVICE_ROOT}/invitations/${token}`, { auth: null })).status).toBe(
      410,
    );
    expectError(await h.http(`/services/invitations/${token}`, { auth: null }), 404, 'NOT_FOUND');
  });
});

describe('HEAD', () => {
  it('answers an operation’s headers without a body, and needs credentials too', async () => {
    const head = await h.http(`/${SERVICE_ROOT}/rest/pals/bare`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.type).toBe('application/xml; charset=utf-8');
    expect(head.text).toBe('');
    const list = await h.http(`/${SERVICE_ROOT}/rest/pals`, {
      method: 'HEAD',
      accept: 'application/json',
    });
    expect([list.status, list.type, list.headers.get('X-Total-Count')]).toEqual([
      200,
      'application/json; charset=utf-8',
      String(PALS_A.filter((m) => !m.test && !m.installed).length),
    ]);
    const anonymous = await h.http(`/${SERVICE_ROOT}/rest/pals/bare`, {
      method: 'HEAD',
      auth: null,
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('WWW-Authenticate')).toBe('Basic realm="pal"');
  });
});

describe('request ids', () => {
  it('every answer carries X-Request-Id; a caller’s own id is kept', async () => {
    const mine = await h.http(`/${SERVICE_ROOT}/rest/pals/bare`, {
      headers: { 'X-Request-Id': 'trace-42' },
    });
    expect(mine.headers.get('X-Request-Id')).toBe('trace-42');
    const ids = new Set<string>();
    for (const path of [
      `/${SERVICE_ROOT}/rest/pals/bare`,
      `/${SERVICE_ROOT}/rest/pals/none`,
      `/${SERVICE_ROOT}/rest/pals/%zz`,
      `/${SERVICE_ROOT}/rest/pals/${'x'.repeat(1000)}`,
      '/nowhere',
      '/healthz',
    ]) {
      const id = (await h.http(path)).headers.get('X-Request-Id');
      expect(id, path).toMatch(/^[0-9a-f-]{36}$/);
      ids.add(id!);
    }
    expect(ids.size).toBe(6);
  });
});
