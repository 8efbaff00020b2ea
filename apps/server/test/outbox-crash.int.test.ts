// `kill -9` of a node under load with webhook deliveries in flight loses no committed event, on
// either engine (docs/events.md): ten rounds of a real `pal serve` process taking T1 creations
// from concurrent callers while its dispatcher delivers their transaction.created events to a
// slow receiver, each round ended by SIGKILL; then one more node. Every event the database holds
// (and so every transaction a caller got an id for) must reach the receiver at least once. The
// receiver takes a delivery only when it can answer it: one whose sender died before the answer
// is not taken, and must come again from a later node once its lease has run out.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/storage/database.js';
import { engine, freshDatabaseEnv } from './engine.js';
import { tempDir } from './helpers.js';
import {
  CRASH_ROUNDS as ROUNDS,
  crashEnterprise,
  killNode,
  palJson,
  startKillableNode,
  startT1Writers,
} from './pal-process.js';
import { startWebhookReceiver } from './webhook-receiver.js';

/** Acknowledged creations per round before the kill. */
const PER_ROUND = 25;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe(`nodes killed with SIGKILL while delivering webhooks (${engine})`, () => {
  const dir = tempDir('pal-outbox-crash-');
  afterAll(() => dir.remove());

  it(`delivers every committed event at least once over ${ROUNDS} kills`, async () => {
    const receiver = await startWebhookReceiver();
    let open = 0;
    // Deliveries open when a node is killed are answered only once it is gone, so the receiver
    // sees their sender hang up (each round cuts at least one off).
    let killing = Promise.resolve();
    receiver.respond = async () => {
      open += 1;
      await sleep(30);
      await killing;
      open -= 1;
      return 204;
    };
    const env = {
      PATH: process.env.PATH ?? '',
      DATA_DIR: join(dir.path, 'data'),
      PAL_SECRET_KEY: 'c4'.repeat(32),
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // A killed node's messages are free again after 2 s.
      OUTBOX_LEASE_SECONDS: '2',
      WEBHOOK_TIMEOUT_MS: '1000',
      OUTBOX_RETRY_BASE_MS: '100',
      OUTBOX_RETRY_MAX_MS: '500',
      OUTBOX_POLL_MS: '200',
      ...(await freshDatabaseEnv()),
    };
    const authorization = await crashEnterprise(env);
    const added = await palJson(
      env,
      'webhook',
      'add',
      `${receiver.url}/crash`,
      '--enterprise',
      'Crash',
      '--events',
      'transaction.created',
    );
    receiver.secrets.set('/crash', [added.secret!]);

    const acknowledged: string[] = [];
    let roundsWithDeliveriesInFlight = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const node = await startKillableNode(env);
      try {
        const start = acknowledged.length;
        const writers = startT1Writers(node, authorization, 'expense-approval', 8, acknowledged);
        while (acknowledged.length - start < PER_ROUND || open === 0) await sleep(5);
        if (open > 0) roundsWithDeliveriesInFlight += 1;
        let killDone = () => {};
        killing = new Promise((done) => (killDone = done));
        const gone = killNode(node);
        await writers.stop();
        // Killed for real: nothing answers on its port any more.
        expect(await gone).toBe(true);
        await sleep(50);
        killDone();
      } finally {
        node.child.kill('SIGKILL');
      }
    }

    // One more node delivers what the killed ones left: messages never taken, and those whose
    // lease lapsed with their node.
    const last = await startKillableNode(env);
    try {
      const db = openDatabase(loadConfig(env));
      try {
        const committed = await db
          .selectFrom('outbox_messages')
          .select(['id', 'payload'])
          .where('kind', '=', 'webhook')
          .execute();
        const committedIds = new Set(committed.map((m) => m.id));
        await receiver.until((got) => {
          const seen = new Set(got.filter((d) => !d.abandoned).map((d) => d.id));
          return [...committedIds].every((id) => seen.has(id));
        }, 90_000);
        const transactions = new Set(
          (await db.selectFrom('transactions').select('id').execute()).map((r) => r.id),
        );
        // Every committed transaction has its event, and every event reached the receiver.
        const eventTransactions = new Set(
          committed.map(
            (m) =>
              (JSON.parse(m.payload) as { data: { transactionId: string } }).data.transactionId,
          ),
        );
        expect(eventTransactions).toEqual(transactions);
        const taken = receiver.received.filter((d) => !d.abandoned);
        const delivered = new Set(taken.map((d) => d.data.transactionId as string));
        // Kills cut deliveries off mid-answer, and those came again.
        const abandoned = receiver.received.filter((d) => d.abandoned);
        expect(abandoned.length).toBeGreaterThanOrEqual(ROUNDS);
        const takenIds = new Set(taken.map((d) => d.id));
        expect(abandoned.filter((d) => !takenIds.has(d.id))).toEqual([]);
        expect(acknowledged.length).toBeGreaterThanOrEqual(ROUNDS * PER_ROUND);
        expect(acknowledged.filter((id) => !delivered.has(id))).toEqual([]);
        expect([...transactions].filter((id) => !delivered.has(id))).toEqual([]);
        expect(receiver.received.every((d) => d.verifiedBy.length === 1)).toBe(true);
        expect(roundsWithDeliveriesInFlight).toBe(ROUNDS);
        // At least once: a delivery the kill cut off may come again, under the same webhook-id.
        const perId = new Map<string, number>();
        for (const d of taken) perId.set(d.id, (perId.get(d.id) ?? 0) + 1);
        expect(perId.size).toBe(committedIds.size);
      } finally {
        await db.destroy();
      }
    } finally {
      last.child.kill('SIGTERM');
      await last.exited;
      await receiver.close();
    }
  }, 600_000);
});
