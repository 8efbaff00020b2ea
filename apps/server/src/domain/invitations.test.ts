import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser, type AddressObject } from 'mailparser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, testContext, type TestContext } from '../../test/helpers.js';
import { ALICE, acmeAndOther } from '../../test/people-fixtures.js';
import type { Mailer } from '../mail/mailer.js';
import { deliverDueMessages } from '../outbox/dispatcher.js';
import { createEnterprise } from './enterprises.js';
import { ConflictError, GoneError, NotFoundError } from './errors.js';
import {
  INVITATION_MAIL_INTERVAL_MS,
  INVITATION_TTL_DAYS,
  acceptInvitation,
  describeInvitation,
  inviteSso,
} from './invitations.js';
import { createSso, deleteSso, getSsoStatus } from './ssos.js';

describe('invitations', () => {
  let t: TestContext;
  let clock: ReturnType<typeof manualClock>;
  let acme: string;
  let other: string;
  beforeEach(async () => {
    clock = manualClock();
    ({ t, acme, other } = await acmeAndOther(
      { PUBLIC_URL: 'https://pal.example.com/' },
      { now: clock.now },
    ));
  });
  afterEach(() => t.close());

  /** The mails delivered (no MAIL_URL: into DATA_DIR/outbox), parsed, oldest first. */
  const outbox = async () => {
    await deliverDueMessages(t.ctx);
    const dir = join(t.dir, 'outbox');
    let files: string[] = [];
    try {
      files = readdirSync(dir).sort();
    } catch {
      return [];
    }
    return Promise.all(files.map((f) => simpleParser(readFileSync(join(dir, f)))));
  };
  const linkToken = (text: string) => {
    const match = /https:\/\/pal\.example\.com\/services\/invitations\/([A-Za-z0-9_-]{43})/.exec(
      text,
    );
    expect(match, text).not.toBeNull();
    return match![1];
  };
  describe('E3 inviteSso and the invitation link', () => {
    it('answers 404 for an address nobody registered', async () => {
      await expect(inviteSso(t.ctx, acme, 'nobody@example.com')).rejects.toThrow(NotFoundError);
      expect(await outbox()).toHaveLength(0);
    });

    it('creates a pending SSO and mails a link whose GET changes nothing and whose POST activates, once', async () => {
      await createSso(t.ctx, acme, ALICE); // Alice registered through Acme ...
      const sso = await inviteSso(t.ctx, other, 'alice.ng@example.com'); // ... is invited by Other.
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('PENDING_ACTIVATION');

      const [mail] = await outbox();
      // (nodemailer lower-cases the domain; the local part is kept.)
      expect((mail.to as AddressObject).value.map((a) => a.address)).toEqual([
        'Alice.Ng@example.com',
      ]);
      expect(mail.subject).toBe('Invitation from Other');
      expect(mail.from?.text).toContain('no-reply@localhost');
      const token = linkToken(mail.text!);
      expect(mail.html).toContain(`https://pal.example.com/services/invitations/${token}`);
      // Stored only as a hash; the queued mail was sealed, and emptied once delivered.
      const stored = await t.ctx.db.selectFrom('invitations').selectAll().execute();
      expect(JSON.stringify(stored)).not.toContain(token);
      const queued = await t.ctx.db.selectFrom('outbox_messages').selectAll().execute();
      expect(queued.map((m) => [m.kind, m.status, m.payload])).toEqual([['mail', 'delivered', '']]);

      // GET (a mail scanner, or the person): shows the page and changes nothing, however often.
      for (let i = 0; i < 3; i++) {
        expect(await describeInvitation(t.ctx, token)).toMatchObject({
          enterpriseName: 'Other',
          email: ALICE.email,
          firstName: 'Alice',
        });
      }
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('PENDING_ACTIVATION');

      // POST: activates.
      expect(await acceptInvitation(t.ctx, token)).toEqual({
        ssoId: sso,
        enterpriseId: other,
        enterpriseName: 'Other',
        email: ALICE.email,
      });
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('ACTIVE');
      await expect(acceptInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      await expect(describeInvitation(t.ctx, token)).rejects.toMatchObject({
        statusCode: 410,
        code: 'TOKEN_EXPIRED',
      });
      // Inviting again once active is a conflict.
      await expect(inviteSso(t.ctx, other, ALICE.email)).rejects.toThrow(ConflictError);
    });

    it('of concurrent confirmations exactly one wins', async () => {
      await createSso(t.ctx, acme, ALICE);
      await inviteSso(t.ctx, other, ALICE.email);
      const token = linkToken((await outbox())[0].text!);
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () => acceptInvitation(t.ctx, token)),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(
        results.filter((r) => r.status === 'rejected' && r.reason instanceof GoneError),
      ).toHaveLength(7);
    });

    it('answers 410 for unknown, malformed and expired tokens', async () => {
      await createSso(t.ctx, acme, ALICE);
      const sso = await inviteSso(t.ctx, other, ALICE.email);
      const token = linkToken((await outbox())[0].text!);
      await expect(acceptInvitation(t.ctx, 'A'.repeat(43))).rejects.toThrow(GoneError);
      await expect(acceptInvitation(t.ctx, 'garbage')).rejects.toThrow(GoneError);
      await expect(describeInvitation(t.ctx, '')).rejects.toThrow(GoneError);
      clock.advance(INVITATION_TTL_DAYS * 86_400_000);
      await expect(describeInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      await expect(acceptInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('PENDING_ACTIVATION');
    });

    it('a second invitation within the hour reuses the pending SSO and mails nothing; an hour later a new link, and either link activates it', async () => {
      await createSso(t.ctx, acme, ALICE);
      const first = await inviteSso(t.ctx, other, ALICE.email);
      clock.advance(INVITATION_MAIL_INTERVAL_MS - 1);
      expect(await inviteSso(t.ctx, other, ALICE.email)).toBe(first);
      expect(await outbox()).toHaveLength(1);
      clock.advance(1);
      const second = await inviteSso(t.ctx, other, ALICE.email);
      expect(second).toBe(first);
      const [a, b] = (await outbox()).map((m) => linkToken(m.text!));
      expect(a).not.toBe(b);
      await acceptInvitation(t.ctx, b);
      await expect(acceptInvitation(t.ctx, a)).rejects.toThrow(GoneError);
    });

    it('the hour is per SSO: another enterprise may invite the same person at once', async () => {
      await createSso(t.ctx, acme, ALICE);
      const third = (await createEnterprise(t.ctx, 'Third')).id;
      const mine = await inviteSso(t.ctx, other, ALICE.email);
      const theirs = await inviteSso(t.ctx, third, ALICE.email);
      expect(theirs).not.toBe(mine);
      expect(await outbox()).toHaveLength(2);
    });

    it('the link of a deleted SSO is spent', async () => {
      await createSso(t.ctx, acme, ALICE);
      const sso = await inviteSso(t.ctx, other, ALICE.email);
      const token = linkToken((await outbox())[0].text!);
      await deleteSso(t.ctx, other, sso);
      await expect(describeInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      await expect(acceptInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('DELETED');
    });

    it('keeps the invitation when the mail server is away, and mails it once it is back', async () => {
      let down = true;
      const sent: string[] = [];
      const flaky: Mailer = {
        mode: 'smtp',
        send: async (message) => {
          if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:25');
          sent.push(message.text);
          return { messageId: `<${sent.length}@test>` };
        },
        close: () => {},
      };
      const broken = await testContext(
        {
          PUBLIC_URL: 'https://pal.example.com/',
          OUTBOX_RETRY_BASE_MS: '200',
          OUTBOX_RETRY_MAX_MS: '200',
        },
        { mailer: flaky },
      );
      try {
        const enterprise = (await createEnterprise(broken.ctx, 'Acme')).id;
        await createSso(broken.ctx, enterprise, ALICE);
        const invitee = (await createEnterprise(broken.ctx, 'Other')).id;
        const sso = await inviteSso(broken.ctx, invitee, ALICE.email);
        expect(await getSsoStatus(broken.ctx, invitee, sso)).toBe('PENDING_ACTIVATION');

        await deliverDueMessages(broken.ctx);
        const waiting = await broken.ctx.db.selectFrom('outbox_messages').selectAll().execute();
        expect(waiting.map((m) => [m.status, m.attempts, m.last_error])).toEqual([
          ['pending', 1, 'connect ECONNREFUSED 127.0.0.1:25'],
        ]);
        // Sealed: the single-use token is nowhere in the database in clear.
        expect(waiting[0]!.payload).not.toContain('invitations/');
        expect(sent).toEqual([]);

        // The retry falls due 100 to 200 ms after the failure.
        down = false;
        await new Promise((done) => setTimeout(done, 250));
        await deliverDueMessages(broken.ctx);
        expect(sent).toHaveLength(1);
        expect(linkToken(sent[0]!)).toMatch(/^[A-Za-z0-9_-]{43}$/);
        const done = await broken.ctx.db.selectFrom('outbox_messages').select('status').execute();
        expect(done).toEqual([{ status: 'delivered' }]);
      } finally {
        await broken.close();
      }
    });
  });
});
