// The invitation (E3) end to end over real HTTP and real SMTP: the server's nodemailer delivers to
// a real smtp-server listener on loopback (MAIL_URL); the mail is parsed; its link survives mail
// scanners: GET shows a confirm page and changes nothing, the page's POST activates (E5 → ACTIVE),
// and every later use, like an unknown or malformed token, answers 410 with one page for all.
// A person is mailed at most one invitation an hour per SSO, however often E3 is called.
import type { AddressObject } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectError,
  form,
  PUBLIC_URL,
  startHarness,
  type Answer,
  type Harness,
} from './harness.js';
import type { ReceivedMail } from '@pal-workflow/test-support';
import { INVITATION_MAIL_INTERVAL_MS } from '../src/domain/invitations.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ smtp: true });
});
afterAll(() => h?.close());

const ROOT = '/services/rest';
const LINK = new RegExp(
  `${PUBLIC_URL.replace(/[.:/]/g, '\\$&')}(/services/invitations/([A-Za-z0-9_-]{43}))(?![A-Za-z0-9_-])`,
);

/** A person registered (E1) by the second enterprise, whom the first then invites. */
async function registered(local: string): Promise<string> {
  const email = `${local}@people.example.test`;
  await h.b.json.enterprise.createSso({ firstName: 'Ivy', lastName: `Invitee-${local}`, email });
  return email;
}

/** The mails received since `before`, exactly `count` of them. */
function newMails(before: number, count: number): ReceivedMail[] {
  const mails = h.mails.slice(before);
  expect(mails).toHaveLength(count);
  return mails;
}

/** The link's path on this server (the mail carries PUBLIC_URL). */
function linkOf(received: ReceivedMail): string {
  const match = LINK.exec(received.mail.text ?? '');
  expect(match, received.mail.text).not.toBeNull();
  expect(received.mail.html).toContain(match![0]);
  return match![1]!;
}

const page = (path: string, method: 'GET' | 'POST' | 'HEAD' = 'GET'): Promise<Answer> =>
  h.http(path, { method, auth: null, accept: 'text/html' });
const status = (sso: string) => h.a.json.enterprise.getSsoStatus({ sso });

function expectGone(answer: Answer): string {
  expect(answer.status, answer.text).toBe(410);
  expect(answer.type).toBe('text/html; charset=utf-8');
  expect(answer.text).toContain('This link is no longer valid');
  expect(answer.text).not.toContain('<form');
  return answer.text;
}

describe('E3 and the invitation link', () => {
  it('sends a real mail whose link confirms on GET without effect and activates on POST, once', async () => {
    const email = await registered('ivy');
    const before = h.mails.length;
    const sso = await h.a.xml.enterprise.inviteSso({ email });
    expect(await status(sso)).toBe('PENDING_ACTIVATION');

    const [received] = newMails(before, 1);
    expect(received!.envelope).toEqual({ from: 'pal@example.test', to: [email] });
    expect((received!.mail.to as AddressObject).value[0]!.address).toBe(email);
    expect(received!.mail.subject).toBe(`Invitation from ${h.a.name}`);
    expect(received!.mail.text).toContain('Hello Ivy Invitee-ivy,');
    const link = linkOf(received!);

    // GET (and HEAD), as a mail scanner would: a confirm page, and nothing changes.
    for (let i = 0; i < 2; i++) {
      const confirm = await page(link);
      expect(confirm.status).toBe(200);
      expect(confirm.type).toBe('text/html; charset=utf-8');
      expect(confirm.headers.get('Cache-Control')).toBe('no-store');
      expect(confirm.text).toMatch(/<form method="post">/);
      expect(confirm.text).toContain(email);
      expect(confirm.text).toContain(h.a.name);
      expect(await status(sso)).toBe('PENDING_ACTIVATION');
    }
    expect((await page(link, 'HEAD')).status).toBe(200);
    expect(await status(sso)).toBe('PENDING_ACTIVATION');

    // The page's POST accepts, and answers with the accepted page's address (post, redirect,
    // get), which names no one.
    const posted = await fetch(`${h.url}${link}`, {
      method: 'POST',
      headers: { Accept: 'text/html' },
      redirect: 'manual',
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('Location')).toBe('/services/invitations/accepted');
    const accepted = await page('/services/invitations/accepted');
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.text).toContain('Invitation accepted');
    expect(accepted.text).not.toContain(email);
    expect(await status(sso)).toBe('ACTIVE');
    expect(await h.a.xml.enterprise.getSsoStatus({ sso })).toBe('ACTIVE');

    // Used: 410 for POST and GET, and the SSO stays ACTIVE.
    const again = expectGone(await page(link, 'POST'));
    expect(expectGone(await page(link))).toBe(again);
    expect(await status(sso)).toBe('ACTIVE');
    // Invited once more, the person is already active in the enterprise: 409, no mail.
    const mails = h.mails.length;
    expectError(
      await h.http(`${ROOT}/enterprises/sso/invite`, { body: form({ email }) }),
      409,
      'CONFLICT',
    );
    expect(h.mails.length).toBe(mails);
  });

  it('answers unknown, malformed and used tokens with the same 410 page, creating nothing', async () => {
    const unknown = `/services/invitations/${'A'.repeat(43)}`;
    const pages = [
      expectGone(await page(unknown)),
      expectGone(await page(unknown, 'POST')),
      expectGone(await page('/services/invitations/short')),
      expectGone(await page('/services/invitations/short', 'POST')),
      expectGone(await page(`/services/invitations/${'!'.repeat(43)}`)),
    ];
    expect(new Set(pages).size).toBe(1);
    // Outside the service root there are no invitation pages.
    expectError(
      await h.http(`/user/invitations/${'A'.repeat(43)}`, { auth: null }),
      404,
      'NOT_FOUND',
    );
  });

  it('E3 for an address nobody registered answers 404 and sends nothing', async () => {
    const before = h.mails.length;
    for (const client of [h.a.json, h.a.xml]) {
      const error = (await client.enterprise
        .inviteSso({ email: 'nobody@people.example.test' })
        .catch((e: unknown) => e)) as { status: number; code: string };
      expect([error.status, error.code]).toEqual([404, 'NOT_FOUND']);
    }
    expect(h.mails.length).toBe(before);
    expect(
      await h.a.json.enterprise.isEmailRegistered({ email: 'nobody@people.example.test' }),
    ).toBe(false);
  });

  it('invited again within the hour: the same SSO and no new mail; an hour later a new link, and accepting it ends the first', async () => {
    const email = await registered('twice');
    const before = h.mails.length;
    const sso = await h.a.json.enterprise.inviteSso({ email });
    expect(await h.a.json.enterprise.inviteSso({ email: email.toUpperCase() })).toBe(sso);
    expect(await h.a.xml.enterprise.inviteSso({ email })).toBe(sso);
    const [first] = newMails(before, 1).map(linkOf);
    // An hour later, E3 mails a new link. The hour passes in the database (the invitation is
    // made older): a clock moved forward would also date the outbox message in the future.
    const anHourAgo = new Date(Date.now() - INVITATION_MAIL_INTERVAL_MS - 1000).toISOString();
    await h.domain.db
      .updateTable('invitations')
      .set({ created_at: anHourAgo })
      .where('sso_id', '=', sso)
      .execute();
    expect(await h.a.json.enterprise.inviteSso({ email })).toBe(sso);
    const [, second] = newMails(before, 2).map(linkOf);
    expect(first).not.toBe(second);
    expect((await page(first!)).status).toBe(200);
    expect((await page(second!, 'POST')).status).toBe(200);
    expect(await status(sso)).toBe('ACTIVE');
    expectGone(await page(first!));
    expectGone(await page(first!, 'POST'));
  });

  it('ten E3 of one person at once: one SSO and one mail', async () => {
    const email = await registered('burst');
    const before = h.mails.length;
    const ssos = await Promise.all(
      Array.from({ length: 10 }, () => h.a.json.enterprise.inviteSso({ email })),
    );
    expect(new Set(ssos).size).toBe(1);
    newMails(before, 1);
  });

  it('of ten concurrent confirmations of one link, exactly one wins', async () => {
    const email = await registered('race');
    const before = h.mails.length;
    const sso = await h.a.json.enterprise.inviteSso({ email });
    const [link] = newMails(before, 1).map(linkOf);
    const answers = await Promise.all(Array.from({ length: 10 }, () => page(link!, 'POST')));
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array<number>(9).fill(410)]);
    expect(await status(sso)).toBe('ACTIVE');
  });

  it('a link to an SSO deleted meanwhile (E2) answers 410 and the SSO stays DELETED', async () => {
    const email = await registered('deleted');
    const before = h.mails.length;
    const sso = await h.a.json.enterprise.inviteSso({ email });
    const [link] = newMails(before, 1).map(linkOf);
    expect(await h.a.json.enterprise.deleteSso({ sso })).toBe(true);
    expectGone(await page(link!));
    expectGone(await page(link!, 'POST'));
    expect(await status(sso)).toBe('DELETED');
  });

  it('the invited person’s SSO belongs to the inviting enterprise only', async () => {
    const email = await registered('tenant');
    const before = h.mails.length;
    const sso = await h.a.json.enterprise.inviteSso({ email });
    const [link] = newMails(before, 1).map(linkOf);
    expect((await page(link!, 'POST')).status).toBe(200);
    expect(await status(sso)).toBe('ACTIVE');
    expectError(
      await h.http(`${ROOT}/enterprises/sso/status?sso=${sso}`, { auth: h.b }),
      404,
      'NOT_FOUND',
    );
  });

  it('when the mail server refuses the address for good, the mail is marked failed after one attempt', async () => {
    const email = await registered('bounce');
    h.refusedRecipients.add(email.toLowerCase());
    try {
      const before = h.mails.length;
      // The invitation is kept: its mail went through the outbox, after commit.
      const sso = await h.a.json.enterprise.inviteSso({ email });
      expect(await status(sso)).toBe('PENDING_ACTIVATION');
      expect(h.mails.length).toBe(before);
      // 550 is permanent: no retries against a mailbox that does not exist.
      const mails = await h.domain.db
        .selectFrom('outbox_messages')
        .select(['status', 'attempts', 'last_error'])
        .where('kind', '=', 'mail')
        .where('status', '<>', 'delivered')
        .execute();
      expect(mails).toEqual([
        { status: 'failed', attempts: 1, last_error: expect.stringContaining('550') },
      ]);
    } finally {
      h.refusedRecipients.delete(email.toLowerCase());
    }
    // Once the address takes mail again, inviting again sends a new link, but not within the
    // hour of the last invitation (its mail failed, yet it was one: the rule counts invitations).
    const before = h.mails.length;
    const sso = await h.a.json.enterprise.inviteSso({ email });
    expect(h.mails.length).toBe(before);
    await h.domain.db
      .updateTable('invitations')
      .set({ created_at: new Date(Date.now() - INVITATION_MAIL_INTERVAL_MS - 1000).toISOString() })
      .where('sso_id', '=', sso)
      .execute();
    await h.a.json.enterprise.inviteSso({ email });
    expect(newMails(before, 1)[0]!.envelope.to).toEqual([email]);
  });
});
