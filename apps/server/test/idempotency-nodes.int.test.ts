// Idempotency-Key across two server nodes on one PostgreSQL database, as behind a load balancer:
// concurrent requests with one key, spread over both nodes, make exactly one transaction and all
// get its answer. (The claim is an INSERT that one request wins, whichever node it reaches.)
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/server.js';
import { engine } from './engine.js';
import { form, startHarness, type Harness } from './harness.js';

describe.runIf(engine === 'postgres')('Idempotency-Key on two nodes', () => {
  let h: Harness; // node A
  let b: RunningServer;
  beforeAll(async () => {
    h = await startHarness();
    b = await startServer(h.config, { logger: false });
  });
  afterAll(async () => {
    await b?.close();
    await h?.close();
  });

  it('50 concurrent requests with one key over both nodes make one transaction', async () => {
    const count = async () =>
      Number(
        (await sql<{ n: number }>`select count(*) as n from transactions`.execute(h.domain.db))
          .rows[0]!.n,
      );
    const before = await count();
    const key = `two-nodes-${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const response = await fetch(`${i % 2 ? b.url : h.url}/services/rest/transactions`, {
          method: 'POST',
          headers: {
            authorization: h.a.authorization,
            accept: 'application/json',
            'content-type': 'application/x-www-form-urlencoded',
            'idempotency-key': key,
          },
          body: form({ palId: 'expense-approval' }).toString(),
        });
        return `${response.status} ${await response.text()}`;
      }),
    );
    expect(await count()).toBe(before + 1);
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).toMatch(/^200 "[A-Za-z0-9_-]{22}"$/);
  });
});
