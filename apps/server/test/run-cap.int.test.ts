// The per-enterprise cap on workflow runs (docs/workflows.md, "One enterprise cannot take every
// worker"), over real HTTP on each engine: enterprise A fills its share of the workers with slow
// runs and its waiting line, its next run answers 429 with Retry-After, and enterprise B's runs
// still go through at once, finishing before any of A's.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { startHarness, type Harness, type Tenant } from './harness.js';
import { runSessionAction } from './workflow-runs.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    env: {
      WORKFLOW_TIMEOUT_MS: '3000',
      WORKFLOW_WORKERS: '2',
      WORKFLOW_RUNS_PER_ENTERPRISE: '1',
      WORKFLOW_QUEUE_PER_ENTERPRISE: '1',
    },
  });
  for (const tenant of [h.a, h.b])
    await deployPal(h.domain, tenant.enterpriseId, join(FIXTURES, 'wf-hostile'));
});
afterAll(() => h?.close());

const json = { accept: 'application/json', headers: { 'Content-Type': 'application/json' } };

/** C5 of wf-hostile: loops until the time limit. */
const slowRun = (tenant: Tenant) =>
  h.http('/services/rest/console/wf-hostile/executeWorkflow', {
    ...json,
    auth: tenant,
    body: '{"slow":true}',
  });

const normalRun = (tenant: Tenant) =>
  h.http('/services/rest/console/wf-hostile/runWorkflow', { ...json, auth: tenant, body: '{}' });

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('the per-enterprise cap on runs', () => {
  it("A's slow runs take one worker and wait in line; past the line 429; B's runs pass them", async () => {
    const finished: string[] = [];
    const track = (name: string, answer: Promise<{ status: number; text: string }>) =>
      answer.then((a) => {
        finished.push(name);
        return a;
      });
    const slow = [1, 2].map((n) => track(`A${n}`, slowRun(h.a)));
    await until(() => {
      const runs = h.domain.engine.pool.runsOf(h.a.enterpriseId);
      return runs.admitted === 2 && runs.running === 1 && runs.waiting === 1;
    });

    // A's line is full: its next run of any kind is refused at once, and changes nothing.
    const refused = await normalRun(h.a);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3');
    expect(JSON.parse(refused.text)).toEqual({
      success: false,
      messages: [
        {
          message: expect.stringMatching(
            /^this enterprise has 2 workflow runs in progress, the most it may have; try again in 3 s$/,
          ),
          type: 'RATE_LIMITED',
        },
      ],
    });
    const transactionId = await h.a.json.transactions.createTransaction({ palId: 'wf-hostile' });
    const t6 = await h.http(`/services/rest/transactions/${transactionId}/runWorkflow`, {
      ...json,
      body: '{}',
    });
    expect(t6.status).toBe(429);
    expect(
      (await h.a.json.transactions.getTransaction({ id: transactionId })).webServiceStatus,
    ).toBe('IDLE');

    // B is not behind A: its runs, one after another, take the other worker and are all done
    // before A's first.
    const b = [];
    for (const n of [1, 2, 3]) b.push(await track(`B${n}`, normalRun(h.b)));
    expect(b.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(b.map((a) => JSON.parse(a.text) as unknown)).toEqual(
      Array(3).fill({
        success: true,
        palId: 'wf-hostile',
        messages: [{ message: 'a normal run' }],
      }),
    );

    const done = await Promise.all(slow);
    expect(done.map((a) => JSON.parse(a.text).messages[0].type)).toEqual(
      Array(2).fill('WORKFLOW_TIMEOUT'),
    );
    expect(finished).toHaveLength(5);
    // (Which of A's two reached the pool first is not fixed.)
    expect(finished.slice(0, 3)).toEqual(['B1', 'B2', 'B3']);
    expect(finished.slice(3).sort()).toEqual(['A1', 'A2']);

    // Every slot was given back.
    expect(h.domain.engine.pool.runsOf(h.a.enterpriseId)).toEqual({
      admitted: 0,
      running: 0,
      waiting: 0,
    });
    expect((await normalRun(h.a)).status).toBe(200);
  });

  it('a session page over the cap shows a RATE_LIMITED outcome instead of failing the page', async () => {
    const transactionId = await h.a.json.transactions.createTransaction({ palId: 'wf-hostile' });
    const slow = [1, 2].map(() => slowRun(h.a));
    await until(() => h.domain.engine.pool.runsOf(h.a.enterpriseId).waiting === 1);
    const outcome = await runSessionAction(
      h.domain,
      { enterpriseId: h.a.enterpriseId, palId: 'wf-hostile', transactionId },
      'show',
    );
    expect(outcome).toMatchObject({ action: 'show', ran: true, success: false });
    expect(outcome.messages).toEqual([
      { message: expect.stringMatching(/try again in 3 s/), type: 'RATE_LIMITED' },
    ]);
    await Promise.all(slow);
  });
});
