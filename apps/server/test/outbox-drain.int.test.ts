// OutboxDispatcher.drain, which the CLI and the harness (after every request) wait on, with many
// callers at once, on both engines. Each caller used to wake the dispatcher on every look, due
// messages or not, so with fifty of them (fifty requests answered at once) one was always
// looking, none ever saw it idle, and every caller waited out drain's whole timeout. Whether the
// callers collide is a matter of timing, so the first case also checks the cause itself: a drain
// with nothing due does not wake the dispatcher.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ smtp: true, settleOutbox: false });
});
afterAll(() => h?.close());

const CALLERS = 50;
const ROUNDS = 5;
const TIMEOUT_MS = 5000;

const drainsAtOnce = () =>
  Promise.all(Array.from({ length: CALLERS }, () => h.server.outbox.drain(TIMEOUT_MS)));

describe('drain with many callers at once', () => {
  it('returns to every caller when nothing is due, and wakes nothing', async () => {
    const wake = vi.spyOn(h.server.outbox, 'wake');
    try {
      for (let round = 0; round < ROUNDS; round++)
        await expect(drainsAtOnce()).resolves.toHaveLength(CALLERS);
      expect(wake).not.toHaveBeenCalled();
    } finally {
      wake.mockRestore();
    }
  });

  it('waits for deliveries under way, then returns to every caller', async () => {
    const smtp = h.smtp!;
    const emails = Array.from({ length: 5 }, (_, i) => `drain-${i}@people.example.test`);
    const release = smtp.hold();
    let drains: Promise<unknown> | undefined;
    try {
      // An invitation (E3) mails a person registered in another enterprise.
      for (const email of emails) {
        await h.b.json.enterprise.createSso({ firstName: 'Dra', lastName: 'In', email });
        await h.a.json.enterprise.inviteSso({ email });
      }
      // Deliveries are under way (the listener holds their acknowledgment) as the drains start.
      await vi.waitFor(() => expect(smtp.held()).toBeGreaterThan(0), { timeout: TIMEOUT_MS });
      let returned = 0;
      drains = drainsAtOnce().then(() => (returned = CALLERS));
      await new Promise((done) => setTimeout(done, 300));
      expect(returned, 'a drain returned while a delivery was under way').toBe(0);
    } finally {
      release();
    }
    await expect(drains).resolves.toBe(CALLERS);
    const delivered = new Set(h.mails.flatMap((mail) => mail.envelope.to));
    for (const email of emails) expect(delivered).toContain(email);
  });
});
