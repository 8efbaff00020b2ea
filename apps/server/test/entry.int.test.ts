// Entering pals and transactions with single-use tokens (docs/entry.md) over real HTTP: C6, T5, T8
// and P3 issue them (validation order, lifetimes), GET /services/enter/{token} consumes one,
// starts a browser session (its cookie's attributes) and answers 303 to the session page, which
// shows the pal or transaction and the outcome of the entry's action and runs further actions
// from its form (CSRF token, same origin). Unknown, used and expired tokens: one 410 page.
// Concurrent redemption: exactly one winner. And the whole flow once in real Chromium.
import { request as httpRequest } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { createSso, deleteSso } from '../src/domain/ssos.js';
import { hashToken } from '../src/domain/ids.js';
import { sweepEntries } from '../src/domain/sessions.js';
import { issueTransactionToken } from '../src/domain/tokens.js';
import { listRoles } from '../src/domain/transaction-roles.js';
import { transitionTransaction } from '../src/domain/transactions.js';
import { launchChromium, SCREENSHOTS } from './browser.js';
import { apiError, PUBLIC_URL, startHarness, type Answer, type Harness } from './harness.js';
import { tempDir } from './helpers.js';
import {
  cookieOf,
  csrfOf,
  sessionBrowser,
  sessionPathOf,
  type SessionBrowser,
} from './session-pages.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

let h: Harness;
let pages: SessionBrowser;
let sso: string;
beforeAll(async () => {
  h = await startHarness({ smtp: true });
  pages = sessionBrowser(h.url);
  for (const id of ['wf-console', 'wf-tx', 'wf-no-enter'])
    await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, id));
  sso = await createSso(h.domain, h.a.enterpriseId, {
    firstName: 'Eno',
    lastName: 'Entry',
    email: 'eno@example.test',
  });
});
afterAll(() => h?.close());

// The browser's requests, as plain HTTP (test/session-pages.ts).
const open = (path: string, cookie?: string) => pages.open(path, cookie);
const post = async (
  cookie: string | undefined,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) => (await pages.post(cookie, fields, headers)).status;
const enter = (token: string) => pages.enter(token);

describe('tokens and entry', () => {
  it('T5: a participant enters the transaction; the session page shows it and the enter action', async () => {
    const id = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const token = await h.a.xml.transactions.createTransactionToken({
      transactionId: id,
      userSSO: sso,
    });
    expect(token).toMatch(TOKEN);
    const entered = await open(`/services/enter/${token}`);
    expect(entered.status).toBe(303);
    // A cookie of its own, named by the session's handle, which names its page too.
    const [, handle] = /^pal_session_([\w-]{12})=[\w-]{43}; /.exec(
      entered.headers.get('set-cookie')!,
    )!;
    expect(entered.headers.get('set-cookie')).toMatch(
      /^pal_session_[\w-]{12}=[\w-]{43}; Path=\/services\/; HttpOnly; SameSite=Lax; Max-Age=1800$/,
    );
    expect(entered.headers.get('location')).toBe(`/services/session/${handle}`);
    // The address held the token: no cache keeps the answer, no Referer names it.
    expect(entered.headers.get('cache-control')).toBe('no-store');
    expect(entered.headers.get('referrer-policy')).toBe('no-referrer');
    const { page } = await enter(
      await h.a.json.transactions.createTransactionToken({ transactionId: id, userSSO: sso }),
    );
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).toContain('<h1>Workflow transaction test pal</h1>');
    expect(page.text).toContain('<dd id="your-role">Participant</dd>');
    expect(page.text).toContain(`welcome ${sso} as participant`);
    // The role counts for T2's sso filter.
    expect((await h.a.json.transactions.searchTransactions({ sso })).map((t) => t.id)).toContain(
      id,
    );
    // Used: the one 410 page.
    const again = await open(`/services/enter/${token}`);
    expect(again.status).toBe(410);
    expect(again.text).toContain('This link is no longer valid');
    // The same page for a token that was never one (no oracle), which names that cause too.
    const cut = await pages.open('/services/enter/abc');
    expect([cut.status, cut.text]).toEqual([410, again.text]);
    expect(cut.text).toContain('it did not arrive whole');
  });

  it('T5 into a module without `enter` runs no sandbox job; one with `enter` runs one', async () => {
    const pool = h.domain.engine.pool;
    const run = pool.run.bind(pool);
    let jobs = 0;
    // Counts the jobs the real pool is given (it still runs them).
    pool.run = (...args) => {
      jobs += 1;
      return run(...args);
    };
    try {
      const entries = async (palId: string) => {
        const transactionId = await h.a.json.transactions.createTransaction({ palId });
        const token = await h.a.xml.transactions.createTransactionToken({
          transactionId,
          userSSO: sso,
        });
        const before = jobs;
        const { page } = await enter(token);
        expect(page.status).toBe(200);
        return jobs - before;
      };
      expect(await entries('wf-no-enter')).toBe(0);
      expect(await entries('wf-tx')).toBe(1);
    } finally {
      pool.run = run;
    }
  });

  it("the session page's form runs an offered action with the posted values; the output is escaped", async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const { cookie, page } = await enter(
      await h.a.json.transactions.createTransactionToken({ transactionId: tx, userSSO: sso }),
    );
    expect(await post(cookie, { csrf: csrfOf(page), action: 'note', text: 'hello' })).toBe(303);
    const after = await pages.page(cookie);
    expect(after.text).toContain('noted hello &#60;b&#62;escaped&#60;/b&#62;');
    expect(after.text).not.toContain('<b>escaped</b>');
  });

  it('refuses a form without the CSRF token, from another site, or without a session', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const { cookie, page } = await enter(
      await h.a.json.transactions.createTransactionToken({ transactionId: tx, userSSO: sso }),
    );
    expect(await post(cookie, { action: 'note' })).toBe(403);
    expect(await post(cookie, { action: 'note', csrf: 'x'.repeat(43) })).toBe(403);
    const csrf = csrfOf(page);
    expect(await post(cookie, { action: 'note', csrf }, { Origin: 'https://evil.example' })).toBe(
      403,
    );
    expect(await post(cookie, { action: 'note', csrf }, { 'Sec-Fetch-Site': 'cross-site' })).toBe(
      403,
    );
    expect(
      (await pages.post(undefined, { action: 'note', csrf }, {}, sessionPathOf(cookie))).status,
    ).toBe(401);
    // And the right form still works.
    expect(await post(cookie, { action: 'note', csrf, text: 'ok' })).toBe(303);
    // A forged value, or another session's, under this session's cookie name: no session.
    const path = sessionPathOf(cookie);
    const name = cookie.slice(0, cookie.indexOf('='));
    const other = await enter(
      await h.a.json.transactions.createTransactionToken({ transactionId: tx, userSSO: sso }),
    );
    for (const forged of ['A'.repeat(43), 'forged', other.cookie.slice(name.length + 1)])
      expect((await open(path, `${name}=${forged}`)).status).toBe(401);
    // Without its cookie (the address copied to another browser, or a session ended by its idle
    // time, whose cookie went with it): both causes said, not "ended" alone.
    const elsewhere = await open(path);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.text).toContain('<h1>Your session has ended</h1>');
    expect(elsewhere.text).toContain('ended after 30 minutes without use');
    expect(elsewhere.text).toContain('opened in another browser or device');
    // One page, whatever was asked and whatever the cause: the page with an ended session's
    // cookie, the address without a handle, a document, a completed PDF, a posted form.
    const ended = `${name}=${'A'.repeat(43)}`;
    for (const answer of [
      await open(path, ended),
      await open('/services/session'),
      await open(`${path}/documents/0`),
      await open(`${path}/documents/0/completed`),
      await fetch(h.url + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
        body: 'csrf=x&action=note',
      }).then(async (r) => ({ status: r.status, text: await r.text() })),
    ]) {
      expect(answer.status).toBe(401);
      expect(answer.text).toBe(elsewhere.text);
    }
  });

  it('P3 with userSSO=auto: the entry URL makes a NEW transaction owned by a fresh guest SSO', async () => {
    const url = await h.a.json.pals.createPalToken({ palId: 'wf-tx', userSSO: 'auto' });
    expect(url).toMatch(
      new RegExp(`^${PUBLIC_URL.replace(/[.:/]/g, '\\$&')}/services/enter/[A-Za-z0-9_-]{43}$`),
    );
    const before = (
      await h.a.json.transactions.searchTransactionsRaw({ palId: 'wf-tx' })
    ).raw.headers.get('X-Total-Count');
    // The pal is read before the commit that redeems the token, where the cache serves it (inside
    // a transaction nothing is cached, and SQLite's one writer would wait on the read).
    const reads = vi.spyOn(h.domain.cache, 'get');
    const { page } = await enter(
      url.slice(url.indexOf('/services/enter/') + '/services/enter/'.length),
    );
    const palReads = reads.mock.calls.filter(([key]) => key.startsWith('palDetails\u0000'));
    reads.mockRestore();
    expect(palReads.length).toBeGreaterThan(0);
    expect(palReads.map(([, db]) => db.isTransaction)).not.toContain(true);
    expect(page.text).toContain('<dd id="your-role">Owner: you started it</dd>');
    expect(page.text).toMatch(/welcome [A-Za-z0-9_-]{22} as owner/);
    // Nothing is known of a guest: the run gets no input.person.
    expect(page.text).not.toContain('you are');
    const after = (
      await h.a.json.transactions.searchTransactionsRaw({ palId: 'wf-tx' })
    ).raw.headers.get('X-Total-Count');
    expect(Number(after)).toBe(Number(before) + 1);
  });

  it('P3 for an SSO, C6 with an action, T8 anonymously', async () => {
    const url = await h.a.json.pals.createPalToken({ palId: 'wf-tx', userSSO: sso });
    const { page } = await enter(url.split('/').pop()!);
    expect(page.text).toContain(`welcome ${sso} as owner`);
    expect(page.text).toContain('you are Eno Entry, eno@example.test');

    await h.a.json.console.grantConsolePalAccess({
      palId: 'wf-console',
      ssoId: sso,
      useEnterpriseProfile: true,
    });
    const consoleToken = await h.a.json.console.createConsoleToken({
      palId: 'wf-console',
      ssoId: sso,
      useEnterpriseProfile: true,
      action: 'hello',
    });
    const entered = await enter(consoleToken);
    expect(entered.page.text).toContain('<h1>Workflow console test pal</h1>');
    expect(entered.page.text).toContain(`hello ${sso}`);
    // The SSO's role, as DESIGN §6 has the page show it: in a console, the grant's profile.
    expect(entered.page.text).toContain(
      '<dd id="your-role">console user, with the enterprise&#39;s profile</dd>',
    );

    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const anonymous = await h.a.json.transactions.createAnonymousToken({
      transactionId: tx,
      userSSO: sso,
      action: 'enter',
    });
    const anon = await enter(anonymous);
    expect(anon.page.text).toContain('welcome anonymous as anonymous');
    expect(anon.page.text).not.toContain(sso);
  });

  it('issuing checks in order: unknown ids 404, an SSO not ACTIVE 409, the wrong mode 404', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    await apiError(
      h.a.json.transactions.createTransactionToken({ transactionId: 'nope', userSSO: sso }),
      404,
      'NOT_FOUND',
    );
    await apiError(
      h.a.json.transactions.createTransactionToken({
        transactionId: tx,
        userSSO: 'AAAAAAAAAAAAAAAAAAAAAA',
      }),
      404,
      'NOT_FOUND',
    );
    const gone = await createSso(h.domain, h.a.enterpriseId, {
      firstName: 'Del',
      lastName: 'Eted',
      email: 'del@example.test',
    });
    await deleteSso(h.domain, h.a.enterpriseId, gone);
    await apiError(
      h.a.json.transactions.createAnonymousToken({ transactionId: tx, userSSO: gone }),
      409,
      'CONFLICT',
    );
    await apiError(
      h.a.json.console.createConsoleToken({ palId: 'wf-tx', ssoId: sso }),
      404,
      'NOT_FOUND',
    );
    await apiError(
      h.a.json.pals.createPalToken({ palId: 'wf-console', userSSO: sso }),
      404,
      'NOT_FOUND',
    );
    await apiError(
      h.a.json.pals.createPalToken({ palId: 'nope', userSSO: 'auto' }),
      404,
      'NOT_FOUND',
    );
    // Another enterprise's client: the transaction does not exist for it.
    await apiError(
      h.b.json.transactions.createTransactionToken({ transactionId: tx, userSSO: sso }),
      404,
      'NOT_FOUND',
    );
  });

  it('tokens of every wrong shape, and expired ones, get the one 410 page and create nothing', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const valid = await h.a.json.transactions.createTransactionToken({
      transactionId: tx,
      userSSO: sso,
    });
    for (const bad of [
      'x',
      valid.slice(0, 42),
      `${valid}A`,
      `${valid.slice(0, 42)}+`,
      'A'.repeat(43),
      '%00',
    ]) {
      const answer = await open(`/services/enter/${bad}`);
      expect(answer.status, bad).toBe(410);
      expect(answer.headers.get('set-cookie')).toBeNull();
    }
    const later = new Date(Date.now() + 61_000);
    const expired = await issueTransactionToken(
      { ...h.domain, now: () => new Date(later.getTime() - 122_000) },
      h.a.enterpriseId,
      tx,
      sso,
      'participant',
    );
    expect((await open(`/services/enter/${expired}`)).status).toBe(410);
    expect((await open(`/services/enter/${valid}`)).status).toBe(303);
  });

  it('HEAD of an entry link (a link checker, a mail scanner) leaves its token for the person', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const token = await h.a.json.transactions.createTransactionToken({
      transactionId: tx,
      userSSO: sso,
    });
    for (let i = 0; i < 2; i++) {
      const head = await fetch(`${h.url}/services/enter/${token}`, {
        method: 'HEAD',
        redirect: 'manual',
      });
      expect(head.status).toBe(200);
      expect(head.headers.get('set-cookie')).toBeNull();
      expect(head.headers.get('cache-control')).toBe('no-store');
    }
    const entered = await open(`/services/enter/${token}`);
    expect(entered.status).toBe(303);
    expect((await open(`/services/enter/${token}`)).status).toBe(410);
  });

  /** A new transaction, a new SSO, and a T5 token for the SSO to enter it. */
  const participantToken = async (firstName: string, lastName: string) => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const person = await createSso(h.domain, h.a.enterpriseId, {
      firstName,
      lastName,
      email: `${firstName.toLowerCase()}@example.test`,
    });
    const token = await h.a.json.transactions.createTransactionToken({
      transactionId: tx,
      userSSO: person,
    });
    return { tx, person, token };
  };

  /** The token's row: `used_at` null while it may still be redeemed. */
  const tokenRow = (token: string) =>
    h.domain.db
      .selectFrom('tokens')
      .select('used_at')
      .where('token_hash', '=', hashToken(token))
      .executeTakeFirstOrThrow();
  const wfTxCount = async () =>
    Number(
      (await h.a.json.transactions.searchTransactionsRaw({ palId: 'wf-tx' })).raw.headers.get(
        'X-Total-Count',
      ),
    );
  const expectNotEntered = (answer: Answer, status: number, text: string, sso?: string) => {
    expect(answer.status, answer.text).toBe(status);
    expect(answer.type).toBe('text/html; charset=utf-8');
    expect(answer.text).toContain(text);
    if (sso) expect(answer.text).not.toContain(sso);
    expect(answer.headers.get('set-cookie')).toBeNull();
  };

  it('a token whose SSO was deleted meanwhile: a 403 page that names no SSO, and the token is not used up', async () => {
    const { person, token } = await participantToken('Late', 'Leaver');
    await deleteSso(h.domain, h.a.enterpriseId, person);
    const answer = await open(`/services/enter/${token}`);
    expectNotEntered(answer, 403, 'You can no longer act for this enterprise.', person);
    expect(await h.a.json.transactions.searchTransactions({ sso: person })).toEqual([]);
    expect((await tokenRow(token)).used_at).toBeNull();

    // T8: an anonymous visitor is not that SSO; the page says so in one neutral sentence.
    const anonymous = await participantToken('Anon', 'Leaver');
    const t8 = await h.a.json.transactions.createAnonymousToken({
      transactionId: anonymous.tx,
      userSSO: anonymous.person,
      action: 'note',
    });
    await deleteSso(h.domain, h.a.enterpriseId, anonymous.person);
    const t8Answer = await open(`/services/enter/${t8}`);
    expectNotEntered(t8Answer, 403, 'This link was withdrawn.', anonymous.person);
    expect((await tokenRow(t8)).used_at).toBeNull();
  });

  it('P3 whose SSO was deleted meanwhile makes no transaction and leaves the token unused', async () => {
    const person = await createSso(h.domain, h.a.enterpriseId, {
      firstName: 'Pia',
      lastName: 'Gone',
      email: 'pia.gone@example.test',
    });
    const url = await h.a.json.pals.createPalToken({ palId: 'wf-tx', userSSO: person });
    const token = url.split('/').pop()!;
    await deleteSso(h.domain, h.a.enterpriseId, person);
    const before = await wfTxCount();
    const events = await h.domain.db.selectFrom('outbox_messages').select('id').execute();
    expectNotEntered(
      await open(`/services/enter/${token}`),
      403,
      'You can no longer act for this enterprise.',
      person,
    );
    expect(await wfTxCount()).toBe(before);
    expect((await tokenRow(token)).used_at).toBeNull();
    // No transaction.created webhook or mail went out for what was not made.
    expect(await h.domain.db.selectFrom('outbox_messages').select('id').execute()).toEqual(events);
    const audits = await h.domain.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('action', 'like', 'token.%')
      .where('details', 'like', `%${hashToken(token).slice(0, 12)}%`)
      .orderBy('id')
      .execute();
    expect(audits.map((r) => r.action)).toEqual(['token.issued', 'token.refused']);
    expect(JSON.parse(audits[1]!.details!)).toMatchObject({ reason: 'FORBIDDEN' });
  });

  it('P3 userSSO=auto for a pal no longer in transaction mode makes no guest SSO and leaves the token unused', async () => {
    const folder = tempDir();
    const manifest = (transaction: boolean) =>
      writeFileSync(
        join(folder.path, 'pal.json'),
        JSON.stringify({ id: 'p3-moved', name: 'Moved', modes: { transaction } }),
      );
    try {
      manifest(true);
      await deployPal(h.domain, h.a.enterpriseId, folder.path);
      const url = await h.a.json.pals.createPalToken({ palId: 'p3-moved', userSSO: 'auto' });
      manifest(false);
      await deployPal(h.domain, h.a.enterpriseId, folder.path);
      const guests = () =>
        h.domain.db
          .selectFrom('accounts')
          .select('id')
          .where('email', 'like', '%@guest.invalid')
          .execute();
      const before = await guests();
      const token = url.split('/').pop()!;
      expectNotEntered(
        await open(`/services/enter/${token}`),
        400,
        'is not a transaction-mode pal',
      );
      expect(await guests()).toEqual(before);
      expect((await tokenRow(token)).used_at).toBeNull();
    } finally {
      folder.remove();
    }
  });

  it('a token whose transaction was archived meanwhile: a 403 page that says so, and no role', async () => {
    const { tx, token } = await participantToken('Arch', 'Ived');
    await transitionTransaction(h.domain, h.a.enterpriseId, tx, 'cancel');
    await transitionTransaction(h.domain, h.a.enterpriseId, tx, 'archive');
    const answer = await open(`/services/enter/${token}`);
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('This transaction is archived.');
    expect(answer.headers.get('set-cookie')).toBeNull();
    expect(await listRoles(h.domain, h.a.enterpriseId, tx)).toEqual([]);
  });

  it('of 200 concurrent redeemers of one token, exactly one wins (20 rounds)', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    for (let round = 0; round < 20; round++) {
      const token = await issueTransactionToken(h.domain, h.a.enterpriseId, tx, sso, 'participant');
      const answers = await Promise.all(
        Array.from({ length: 200 }, () =>
          fetch(`${h.url}/services/enter/${token}`, { redirect: 'manual' }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      await Promise.all(answers.map((a) => a.arrayBuffer()));
      expect(
        statuses.filter((s) => s === 303),
        `round ${round}`,
      ).toHaveLength(1);
      expect(statuses.filter((s) => s === 410)).toHaveLength(199);
    }
  });

  it('the sweep removes used and expired tokens and ended sessions, and counts the live ones', async () => {
    await h.a.json.transactions.createTransactionToken({
      transactionId: await h.a.json.transactions.createTransaction({ palId: 'wf-tx' }),
      userSSO: sso,
    });
    const now = await sweepEntries(h.domain);
    expect(now.tokensRemoved).toBeGreaterThan(0); // the used ones of the tests above
    expect(now.liveTokens).toBeGreaterThanOrEqual(1);
    expect(now.liveSessions).toBeGreaterThan(0);
    const later = await sweepEntries({
      ...h.domain,
      now: () => new Date(Date.now() + 31 * 60_000),
    });
    expect(later).toEqual({
      tokensRemoved: now.liveTokens,
      sessionsRemoved: now.liveSessions,
      liveTokens: 0,
      liveSessions: 0,
    });
  });

  it('every status answered is one the bundled OpenAPI declares for its operation', () => {
    expect(h.undeclaredStatuses()).toEqual([]);
  });
});

/** Runs the wf-tx submit step, which mails `sso` a link; its path and query. */
async function mailedLink(): Promise<{ tx: string; path: string }> {
  const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
  const before = h.mails.length;
  await h.a.json.transactions.runTransactionWorkflow({
    transactionId: tx,
    transactionContent: {
      postData: [
        { name: 'step', value: 'submit' },
        { name: 'approver', value: sso },
        { name: 'amount', value: '5' },
      ],
    },
  });
  expect(h.mails.length).toBe(before + 1);
  const url = /http:\/\/pal\.example\.test:8443(\/services\/mail\?\S+)/.exec(
    h.mails.at(-1)!.mail.text!,
  );
  return { tx, path: url![1]! };
}

describe("a browser's sessions", () => {
  /** A T5 entry into a new transaction; its session's cookie. */
  const entered = async () => {
    const transactionId = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    return (
      await enter(
        await h.a.json.transactions.createTransactionToken({ transactionId, userSSO: sso }),
      )
    ).cookie;
  };
  const attributes = 'Path=/services/; HttpOnly; SameSite=Lax';

  it('keeps each 30 minutes from its last page; an address without a handle goes to the last used', async () => {
    const one = await entered();
    const two = await entered();
    const page = await open(sessionPathOf(one), `${one}; ${two}`);
    expect(page.status).toBe(200);
    // Its cookie kept another 30 minutes from now, not from the entry; the other's untouched.
    expect(page.headers.getSetCookie()).toEqual([`${one}; ${attributes}; Max-Age=1800`]);
    const bare = await open('/services/session', `${two}; ${one}`);
    expect(bare.status).toBe(303);
    expect(bare.headers.get('location')).toBe(sessionPathOf(one));
    // A form posted to the address without a handle: its CSRF token names its session, whose
    // page gets it again (307: the browser posts the same body there); without one, nothing.
    const both = `${two}; ${one}`;
    const csrf = csrfOf(await pages.page(one));
    const redirected = await pages.post(both, { csrf, action: 'note' }, {}, '/services/session');
    expect(redirected.status).toBe(307);
    expect(redirected.headers.get('location')).toBe(sessionPathOf(one));
    // As a client that follows redirects: the form is taken on its page.
    const followed = await fetch(`${h.url}/services/session`, {
      method: 'POST',
      headers: { Cookie: both, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, action: 'note', text: 'via the old address' }).toString(),
    });
    expect(followed.url).toBe(h.url + sessionPathOf(one));
    expect(await followed.text()).toContain('noted via the old address');
    // A multipart form (a page with an upload posts one). A browser sends the same bytes again to
    // the 307's address; undici's fetch would not (it re-encodes FormData under a new boundary but
    // keeps the first Content-Type), so the bytes are made once and sent twice here, and Chromium
    // follows such a redirect itself in session-page.browser.int.test.ts.
    const posting = async (fields: Record<string, string | Blob>) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields))
        if (typeof value === 'string') form.set(name, value);
        else form.set(name, value, `${name}.bin`);
      const encoded = new Request('http://localhost/', { method: 'POST', body: form });
      return {
        method: 'POST',
        headers: { Cookie: both, 'Content-Type': encoded.headers.get('content-type')! },
        body: new Uint8Array(await encoded.arrayBuffer()),
        redirect: 'manual',
      } as const;
    };
    const multipart = await posting({ csrf, action: 'note', text: 'as multipart' });
    const manual = await fetch(`${h.url}/services/session`, multipart);
    expect(manual.status).toBe(307);
    expect(manual.headers.get('location')).toBe(sessionPathOf(one));
    const again = await fetch(h.url + manual.headers.get('location')!, multipart);
    expect(again.status).toBe(303);
    expect((await open(sessionPathOf(one), one)).text).toContain('noted as multipart');
    // One it cannot read is refused as on the page itself, and says so.
    const unreadable = await fetch(`${h.url}/services/session`, {
      method: 'POST',
      headers: { Cookie: both, 'Content-Type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="csrf"\r\n\r\nunfinished',
    });
    expect(unreadable.status).toBe(400);
    expect(await unreadable.text()).toContain('not a readable multipart/form-data body');
    // Files are passed over here, not read: one the page itself would refuse (not an upload
    // control) does not stop the 307, and the page refuses it when the form comes again.
    const fileForm = await posting({
      csrf,
      action: 'note',
      stray: new Blob(['x'.repeat(100_000)]),
    });
    const passedOver = await fetch(`${h.url}/services/session`, fileForm);
    expect(passedOver.status).toBe(307);
    const refusedThere = await fetch(h.url + passedOver.headers.get('location')!, fileForm);
    expect(refusedThere.status).toBe(400);
    expect(await refusedThere.text()).toContain('is not an upload');
    // Without a live session's cookie the body is not read at all: the 409 comes while the body
    // is still on its way.
    const unsent = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = httpRequest(`${h.url}/services/session`, {
        method: 'POST',
        headers: {
          'Content-Type': 'multipart/form-data; boundary=xyz',
          'Content-Length': '1000000',
        },
      });
      request.on('error', reject);
      request.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          request.destroy();
          resolve({ status: response.statusCode!, text });
        });
      });
      request.write('--xyz\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n');
    });
    expect(unsent.status).toBe(409);
    expect(unsent.text).toContain('This form was not sent');
    for (const fields of [{ action: 'note' }, { csrf: 'x'.repeat(43), action: 'note' }] as Record<
      string,
      string
    >[]) {
      const outdated = await pages.post(both, fields, {}, '/services/session');
      expect(outdated.status).toBe(409);
      expect(outdated.text).toContain('This form was not sent');
    }
    // Another session's page, documents and completed PDFs, with only this session's cookie.
    for (const below of ['', '/documents/0', '/documents/0/completed'])
      expect((await open(sessionPathOf(one) + below, two)).status).toBe(401);
  });

  it('holds at most 20: an entry drops the cookies of ended sessions first, then the least recently used', async () => {
    const held: string[] = [];
    for (let i = 0; i < 19; i++) held.push(await entered());
    const enterWith = async (cookies: string[]) => {
      const transactionId = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
      const token = await h.a.json.transactions.createTransactionToken({
        transactionId,
        userSSO: sso,
      });
      const answer = await open(`/services/enter/${token}`, cookies.join('; '));
      expect(answer.status).toBe(303);
      return answer.headers.getSetCookie();
    };
    const nameOf = (cookie: string) => cookie.slice(0, cookie.indexOf('='));
    const dropped = (cookie: string) => `${nameOf(cookie)}=; ${attributes}; Max-Age=0`;
    // Under 20 held: only the new session's cookie. Names this service never gives do not count
    // and are never sent back.
    const foreign = Array.from({ length: 20 }, (_, i) => `pal_session_x${i}=y`);
    expect(await enterWith([...held.slice(0, 5), ...foreign])).toHaveLength(1);
    // 19 live and one that names no session: that one goes.
    const ended = `pal_session_AAAAAAAAAAAA=${'A'.repeat(43)}`;
    const [kept, ...drops] = await enterWith([...held, ended]);
    expect(drops).toEqual([dropped(ended)]);
    held.push(kept!.split(';')[0]!);
    // 20 live: the one seen longest ago goes, wherever the browser sends it.
    await h.domain.db
      .updateTable('browser_sessions')
      .set({ last_seen_at: new Date(h.domain.now().getTime() - 60_000).toISOString() })
      .where('id_hash', '=', hashToken(held[7]!.slice(held[7]!.indexOf('=') + 1)))
      .execute();
    expect((await enterWith(held)).slice(1)).toEqual([dropped(held[7]!)]);
  });
});

describe('links in mails', () => {
  it('GET shows a confirm page and changes nothing; its POST enters as the recipient and runs the action', async () => {
    const { tx, path } = await mailedLink();
    for (let i = 0; i < 2; i++) {
      const confirm = await open(path);
      expect(confirm.status).toBe(200);
      // The person reads what opens, not the workflow's export name.
      expect(confirm.text).toMatch(/<button type="submit" id="confirm">Open [^<]+<\/button>/);
      expect(confirm.text).not.toContain('approve');
      expect(confirm.headers.get('set-cookie')).toBeNull();
    }
    expect((await h.a.json.transactions.getTransaction({ id: tx })).status).toBe('SUBMITTED');
    const response = await pages.post(undefined, {}, {}, path);
    expect(response.status).toBe(303);
    const cookie = cookieOf(response);
    expect(response.headers.get('location')).toBe(sessionPathOf(cookie));
    const page = await pages.page(cookie);
    expect(page.text).toContain(`approved by ${sso}`);
    expect(page.text).toContain('<dd id="your-role">Approver</dd>');
    expect((await h.a.json.transactions.getTransaction({ id: tx })).status).toBe('APPROVED');
  });

  it('a changed link is one 400 page, and a cross-site POST is refused', async () => {
    const { path } = await mailedLink();
    const broken = path.replace(/encryptedAction=[\w-]{4}/, 'encryptedAction=AAAA');
    expect((await open(broken)).status).toBe(400);
    expect((await open('/services/mail')).status).toBe(400);
    const cross = await fetch(h.url + path, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'Sec-Fetch-Site': 'cross-site',
        'Content-Type': 'application/x-www-form-urlencoded',
      },
    });
    expect(cross.status).toBe(403);
  });
});

describe('entering in Chromium', () => {
  let browser: Browser;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ browser, close } = await launchChromium());
  });
  afterAll(() => close?.());

  it('enters with a T5 token, submits the form, and a used token shows the 410 page', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const token = await h.a.json.transactions.createTransactionToken({
      transactionId: tx,
      userSSO: sso,
    });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const response = await page.goto(`${h.url}/services/enter/${token}`);
    expect(response?.status()).toBe(200);
    expect(page.url()).toMatch(new RegExp(`^${h.url}/services/session/[\\w-]{12}$`));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Workflow transaction test pal',
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'session-entered.png'), fullPage: true });
    await page.getByLabel('Text', { exact: true }).fill('from Chromium');
    await page.getByRole('button', { name: 'Keep the note' }).click();
    await page.waitForSelector('#outcome');
    expect(await page.locator('#outcome').textContent()).toContain('noted from Chromium');
    await page.screenshot({ path: join(SCREENSHOTS, 'session-action.png'), fullPage: true });
    const used = await page.goto(`${h.url}/services/enter/${token}`);
    expect(used?.status()).toBe(410);
    await page.close();
  });

  it('enters with a P3 userSSO=auto URL and sees the new transaction', async () => {
    const url = await h.a.json.pals.createPalToken({ palId: 'wf-tx', userSSO: 'auto' });
    const page = await browser.newPage();
    expect((await page.goto(h.url + new URL(url).pathname))?.status()).toBe(200);
    expect(await page.locator('#your-role').textContent()).toBe('Owner: you started it');
    expect(await page.locator('#status').textContent()).toBe('New');
    expect(await page.locator('#outcome').count()).toBe(1);
    await page.close();
  });

  it('follows a mailed link through its confirm page', async () => {
    const { tx, path } = await mailedLink();
    const page = await browser.newPage();
    expect((await page.goto(h.url + path))?.status()).toBe(200);
    await page.screenshot({ path: join(SCREENSHOTS, 'mail-link-confirm.png'), fullPage: true });
    await Promise.all([
      page.waitForURL(`${h.url}/services/session/*`),
      page.locator('#confirm').click(),
    ]);
    expect(await page.locator('#outcome').textContent()).toContain(`approved by ${sso}`);
    expect((await h.a.json.transactions.getTransaction({ id: tx })).status).toBe('APPROVED');
    await page.close();
  });

  it('refuses a form posted from another site', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const token = await h.a.json.transactions.createTransactionToken({
      transactionId: tx,
      userSSO: sso,
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${h.url}/services/enter/${token}`);
    // A page of another origin (the same server by IP name vs localhost) posts to the session,
    // its address known.
    const sessionUrl = page.url();
    const other = h.url.replace('127.0.0.1', 'localhost');
    await page.route(`${other}/evil`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<form id="f" method="post" action="${sessionUrl}"><input name="action" value="note"><input name="csrf" value="guess"></form><script>document.getElementById('f').submit()</script>`,
      }),
    );
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url() === sessionUrl && r.request().method() === 'POST'),
      page.goto(`${other}/evil`),
    ]);
    // Refused: SameSite=Lax keeps the session cookie off a cross-site post (401), and the origin
    // check would refuse it even with the cookie (403).
    expect([401, 403]).toContain(answer.status());
    await context.close();
  });
});
