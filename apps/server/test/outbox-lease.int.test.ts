// A mail server slower than the outbox's lease (docs/events.md, "Leases"): the node renews the
// lease of a mail while its send goes on, so no node takes it again meanwhile, and the mail
// arrives once. Before, the lease ran out mid-send and the mail went out again once a lease for
// as long as the server stayed slow. A mail sent again all the same (a node killed mid-send)
// keeps its Message-ID, made from the outbox's id.
import { startSmtpListener, type SmtpListener } from '@pal-workflow/test-support';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

const LEASE_SECONDS = 2;

let h: Harness;
let smtp: SmtpListener;
beforeAll(async () => {
  smtp = await startSmtpListener();
  h = await startHarness({
    settleOutbox: false,
    env: {
      MAIL_URL: smtp.url,
      MAIL_FROM: 'Pal <pal@mail.example.test>',
      OUTBOX_LEASE_SECONDS: String(LEASE_SECONDS),
      WEBHOOK_TIMEOUT_MS: '1000',
      OUTBOX_POLL_MS: '100',
    },
  });
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

describe('a mail server slower than the lease', () => {
  it('sends a mail once, however long the server takes to take it, with the outbox id as its Message-ID', async () => {
    const release = smtp.hold();
    // E3 invites a person registered elsewhere: here, in the other enterprise.
    await h.b.json.enterprise.createSso({
      firstName: 'Slow',
      lastName: 'Server',
      email: 'slow@people.example.test',
    });
    await h.a.json.enterprise.inviteSso({ email: 'slow@people.example.test' });
    // Three leases and more while the server holds the mail back.
    await sleep(LEASE_SECONDS * 3_500);
    expect(smtp.held()).toBe(1);
    release();
    const [message] = await h.domain.db
      .selectFrom('outbox_messages')
      .select(['id', 'status', 'attempts'])
      .where('kind', '=', 'mail')
      .execute();
    for (let waited = 0; waited < 5000; waited += 100) {
      const row = await h.domain.db
        .selectFrom('outbox_messages')
        .select('status')
        .where('id', '=', message!.id)
        .executeTakeFirstOrThrow();
      if (row.status !== 'pending') break;
      await sleep(100);
    }
    const done = await h.domain.db
      .selectFrom('outbox_messages')
      .select(['status', 'attempts'])
      .where('id', '=', message!.id)
      .executeTakeFirstOrThrow();
    expect(done).toEqual({ status: 'delivered', attempts: 1 });
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]!.mail.messageId).toBe(`<${message!.id}@mail.example.test>`);
  });
});
