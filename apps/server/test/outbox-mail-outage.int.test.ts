// The mail server away for a while (docs/events.md): invitations (E3) and workflow mails
// (pal.mail.send) made meanwhile are answered at once, wait in the outbox, are retried with
// backoff, and every one arrives once the real SMTP listener is back on its port. The outage is
// PAL_SMTP_OUTAGE_MS long (6 s here; `PAL_SMTP_OUTAGE_MS=60000` for the minute).
import { join } from 'node:path';
import { startSmtpListener, type SmtpListener } from '@pal-workflow/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { startHarness, type Harness } from './harness.js';

const OUTAGE_MS = Number(process.env.PAL_SMTP_OUTAGE_MS ?? 6000);
const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');

let h: Harness;
let smtp: SmtpListener;
let port: number;
beforeAll(async () => {
  smtp = await startSmtpListener();
  port = smtp.port;
  h = await startHarness({
    settleOutbox: false,
    env: {
      MAIL_URL: smtp.url,
      OUTBOX_RETRY_BASE_MS: '200',
      OUTBOX_RETRY_MAX_MS: '1000',
      OUTBOX_POLL_MS: '200',
    },
  });
  await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, 'wf-tx'));
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

describe('the SMTP server down for a while, then up', () => {
  it(
    'delays mail, never loses it: every mail made during the outage arrives at least once',
    async () => {
      const invited: string[] = [];
      for (let i = 0; i < 10; i++) {
        const email = `outage-${i}@people.example.test`;
        await h.b.json.enterprise.createSso({ firstName: 'Out', lastName: `Age${i}`, email });
        invited.push(email);
      }
      const approver = await h.a.json.enterprise.createSso({
        firstName: 'Apu',
        lastName: 'Prover',
        email: 'approver@people.example.test',
      });
      await smtp.close();
      const down = Date.now();

      for (const email of invited) await h.a.json.enterprise.inviteSso({ email });
      const amounts = Array.from({ length: 10 }, (_, i) => `${i + 1}.00`);
      for (const amount of amounts) {
        const transactionId = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
        const run = await h.a.json.transactions.runTransactionWorkflow({
          transactionId,
          transactionContent: {
            postData: [
              { name: 'step', value: 'submit' },
              { name: 'approver', value: approver },
              { name: 'amount', value: amount },
            ],
          },
        });
        expect(run.success).toBe(true);
      }

      // Retried meanwhile, none delivered, none given up.
      await new Promise((done) => setTimeout(done, Math.max(0, OUTAGE_MS - (Date.now() - down))));
      const waiting = await h.domain.db
        .selectFrom('outbox_messages')
        .select(['status', 'attempts', 'last_error'])
        .where('kind', '=', 'mail')
        .execute();
      expect(waiting).toHaveLength(20);
      expect(waiting.every((m) => m.status === 'pending')).toBe(true);
      expect(Math.min(...waiting.map((m) => m.attempts))).toBeGreaterThanOrEqual(2);
      expect(waiting[0]!.last_error).toMatch(/ECONNREFUSED|connect/i);

      smtp = await startSmtpListener({ port });
      const deadline = Date.now() + 30_000;
      while (smtp.received.length < 20 && Date.now() < deadline)
        await new Promise((done) => setTimeout(done, 50));

      const recipients = smtp.received.map((m) => m.envelope.to[0]!);
      for (const email of invited) expect(recipients).toContain(email);
      const texts = smtp.received.map((m) => m.mail.text ?? '');
      for (const amount of amounts)
        expect(
          texts.some((t) => t.includes(`An expense of ${amount} waits`)),
          amount,
        ).toBe(true);
      await h.server.outbox.drain();
      const done = await h.domain.db
        .selectFrom('outbox_messages')
        .select('status')
        .where('kind', '=', 'mail')
        .execute();
      expect(done.every((m) => m.status === 'delivered')).toBe(true);
    },
    OUTAGE_MS + 120_000,
  );
});
