// OutboxDispatcher.drain, which the CLI and the harness (after every request) wait on, with many
// callers at once, on both engines. Each caller used to wake the dispatcher on every look, due
// messages or not, so with fifty of them (fifty requests answered at once) one was always
// looking, none ever saw it idle, and every caller waited out drain's whole timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ smtp: true, settleOutbox: false });
});
afterAll(() => h?.close());

const CALLERS = 50;
const TIMEOUT_MS = 5000;

describe('drain with many callers at once', () => {
  it('returns to every caller when nothing is due', async () => {
    const drains = Array.from({ length: CALLERS }, () => h.server.outbox.drain(TIMEOUT_MS));
    await expect(Promise.all(drains)).resolves.toHaveLength(CALLERS);
  });

  it('returns to every caller once what was due has been delivered', async () => {
    const emails = Array.from({ length: 5 }, (_, i) => `drain-${i}@people.example.test`);
    // An invitation (E3) mails a person registered in another enterprise.
    for (const email of emails) {
      await h.b.json.enterprise.createSso({ firstName: 'Dra', lastName: 'In', email });
      await h.a.json.enterprise.inviteSso({ email });
    }
    const drains = Array.from({ length: CALLERS }, () => h.server.outbox.drain(TIMEOUT_MS));
    await expect(Promise.all(drains)).resolves.toHaveLength(CALLERS);
    const delivered = new Set(h.mails.flatMap((mail) => mail.envelope.to));
    for (const email of emails) expect(delivered).toContain(email);
  });
});
