// Who may act through an entry, and for how long (docs/entry.md), over real HTTP: C6 needs a
// console grant (403 FORBIDDEN without one) and C4 ends what it gave; every session request
// re-checks the person's standing (SSO ACTIVE, role on the transaction or console grant,
// transaction not ARCHIVED) and a session whose standing is gone ends with a 403 page and runs
// nothing; a session ends 12 hours after it started however active; a mailed link enters only while
// its recipient is ACTIVE and the transaction is not ARCHIVED; and no page runs a workflow on a
// transaction whose systemStatus forbids runs (a 409 page, the rule of T6 and T9).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashToken } from '../src/domain/ids.js';
import { MAIL_LINK_SESSIONS } from '../src/domain/sessions.js';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { transitionTransaction } from '../src/domain/transactions.js';
import { palScope, readVariables, transactionScope } from '../src/storage/variables.js';
import { engine } from './engine.js';
import { apiError, expectError, form, startHarness, type Answer, type Harness } from './harness.js';
import { csrfOf, sessionBrowser, sessionPathOf, type SessionBrowser } from './session-pages.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const ROOT = '/services/rest';

let h: Harness;
let pages: SessionBrowser;
beforeAll(async () => {
  h = await startHarness({ smtp: true });
  pages = sessionBrowser(h.url);
  for (const id of ['wf-console', 'wf-tx'])
    await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, id));
});
afterAll(() => h?.close());

let people = 0;
/** A new ACTIVE SSO of the first enterprise. */
const person = () =>
  createSso(h.domain, h.a.enterpriseId, {
    firstName: 'Sam',
    lastName: `Session-${++people}`,
    email: `sam-${people}@sessions.test`,
  });

/** A new wf-tx transaction, and a T5 session of `sso` on it. */
async function participantSession(sso: string) {
  const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
  const token = await h.a.json.transactions.createTransactionToken({
    transactionId: tx,
    userSSO: sso,
  });
  return { tx, ...(await pages.enter(token)) };
}

/** A C6 session of `sso` on wf-console (under the enterprise profile). */
async function consoleSession(sso: string) {
  const token = await h.a.json.console.createConsoleToken({
    palId: 'wf-console',
    ssoId: sso,
    useEnterpriseProfile: true,
  });
  return pages.enter(token);
}

const grant = (sso: string, useEnterpriseProfile = true) =>
  h.a.json.console.grantConsolePalAccess({ palId: 'wf-console', ssoId: sso, useEnterpriseProfile });

const noteOf = async (tx: string) =>
  (await readVariables(h.domain.db, transactionScope(tx))).values.note;
const consoleCount = async () =>
  (await readVariables(h.domain.db, palScope(h.a.enterpriseId, 'wf-console'))).values.count;

/** The answer a session gets once its person may no longer act: a 403 page saying why. */
function expectWithdrawn(cookie: string, answer: Answer, reason: string): void {
  expect(answer.status, answer.text).toBe(403);
  expect(answer.type).toBe('text/html; charset=utf-8');
  expect(answer.text).toContain('Your access has ended');
  expect(answer.text).toContain(reason);
  expect(answer.text).not.toContain('name="csrf"');
  // Its cookie goes too.
  expect(answer.headers.getSetCookie()).toEqual([dropped(cookie)]);
}

/** The Set-Cookie header that drops session cookie `cookie` (`name=value`). */
const dropped = (cookie: string) =>
  `${cookie.slice(0, cookie.indexOf('='))}=; Path=/services/; HttpOnly; SameSite=Lax; Max-Age=0`;

/** Once ended, the session is no more: the one 401 page, and its cookie dropped. */
async function expectEnded(cookie: string): Promise<Answer> {
  const answer = await pages.page(cookie);
  expect(answer.status, answer.text).toBe(401);
  expect(answer.text).toContain('Your session has ended');
  expect(answer.headers.getSetCookie()).toEqual([dropped(cookie)]);
  return answer;
}

describe('C6 and the console grant (C3, C4)', () => {
  it('C6 needs a grant of that pal to that SSO under that profile: else 403 FORBIDDEN, checked after the 404 and 409 rules', async () => {
    const sso = await person();
    const token = (palId: string, ssoId: string, useEnterpriseProfile: boolean, accept: string) =>
      h.http(`${ROOT}/console/${palId}/token`, {
        accept,
        body: form({ ssoId, useEnterpriseProfile: String(useEnterpriseProfile) }),
      });
    for (const [format, accept] of [
      ['json', 'application/json'],
      ['xml', 'application/xml'],
    ] as const) {
      const [message] = expectError(
        await token('wf-console', sso, true, accept),
        403,
        'FORBIDDEN',
        format,
      );
      expect(message).toContain('console grant');
    }
    // 404 and 409 come first, grant or not.
    expectError(await token('nope', sso, true, 'application/json'), 404, 'NOT_FOUND', 'json');
    expectError(await token('wf-tx', sso, true, 'application/json'), 404, 'NOT_FOUND', 'json');
    const gone = await person();
    await h.a.json.enterprise.deleteSso({ sso: gone });
    expectError(await token('wf-console', gone, true, 'application/json'), 409, 'CONFLICT', 'json');

    // A grant under the enterprise profile lets C6 issue for that profile only.
    expect(await grant(sso, true)).toBe(true);
    expect(
      await h.a.json.console.createConsoleToken({
        palId: 'wf-console',
        ssoId: sso,
        useEnterpriseProfile: true,
      }),
    ).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await apiError(
      h.a.xml.console.createConsoleToken({
        palId: 'wf-console',
        ssoId: sso,
        useEnterpriseProfile: false,
      }),
      403,
      'FORBIDDEN',
    );
    // Another enterprise's grant counts for nothing: its client does not even see the pal.
    await apiError(
      h.b.json.console.createConsoleToken({ palId: 'wf-console', ssoId: sso }),
      404,
      'NOT_FOUND',
    );
  });

  it('C4 ends what the grant gave: the open session stops at its next request and runs nothing, and a token issued before no longer enters', async () => {
    const sso = await person();
    await grant(sso);
    const { cookie, page } = await consoleSession(sso);
    const waiting = await h.a.json.console.createConsoleToken({
      palId: 'wf-console',
      ssoId: sso,
      useEnterpriseProfile: true,
    });
    const before = await consoleCount();
    expect(
      await h.a.json.console.deleteConsolePalAccess({
        palId: 'wf-console',
        ssoId: sso,
        useEnterpriseProfile: true,
      }),
    ).toBe(true);
    // Given again before the session's next request: a new grant, which revives nothing the old
    // one gave, neither the session nor a token issued under it.
    await grant(sso);
    expectWithdrawn(
      cookie,
      await pages.post(cookie, { csrf: csrfOf(page), action: 'runWorkflow' }),
      'Your access to this pal was removed',
    );
    expect(await consoleCount()).toBe(before);
    await expectEnded(cookie);

    const refused = await pages.open(`/services/enter/${waiting}`);
    expect(refused.status).toBe(410);
    expect(refused.text).toContain('This link is no longer valid');
    expect(refused.headers.get('set-cookie')).toBeNull();
    // A token issued under the new grant enters.
    await consoleSession(sso);
  });

  // PostgreSQL runs a C6 entry and C4 side by side (SQLite's writers take turns): the entry locks
  // the grant it rests on, so a C4 that has deleted it (and not yet committed) is waited for.
  it.runIf(engine === 'postgres')(
    'a C6 entry that meets C4 mid-commit waits for it and is refused, not given a session a new C3 would revive',
    async () => {
      const sso = await person();
      await grant(sso);
      const token = await h.a.json.console.createConsoleToken({
        palId: 'wf-console',
        ssoId: sso,
        useEnterpriseProfile: true,
      });
      const { entry } = await h.domain.db.transaction().execute(async (trx) => {
        await trx
          .deleteFrom('console_grants')
          .where('enterprise_id', '=', h.a.enterpriseId)
          .where('pal_id', '=', 'wf-console')
          .where('sso_id', '=', sso)
          .execute();
        // The entry starts while the deletion is not committed; a plain read would see the grant.
        const entry = pages.open(`/services/enter/${token}`);
        const settled = await Promise.race([
          entry.then(() => 'answered'),
          new Promise((done) => setTimeout(() => done('waiting'), 500)),
        ]);
        expect(settled).toBe('waiting');
        return { entry };
      });
      const answer = await entry;
      expect(answer.status, answer.text).toBe(403);
      expect(answer.text).toContain('Your access to this pal was removed');
      expect(answer.headers.get('set-cookie')).toBeNull();
    },
  );

  it("C4 withdraws only the tokens of that grant: another profile's and another SSO's still enter", async () => {
    const sso = await person();
    const other = await person();
    for (const [who, profile] of [
      [sso, true],
      [sso, false],
      [other, true],
    ] as const)
      await grant(who, profile);
    const token = (ssoId: string, useEnterpriseProfile: boolean) =>
      h.a.json.console.createConsoleToken({ palId: 'wf-console', ssoId, useEnterpriseProfile });
    const [withdrawn, personal, others] = [
      await token(sso, true),
      await token(sso, false),
      await token(other, true),
    ];
    await h.a.json.console.deleteConsolePalAccess({
      palId: 'wf-console',
      ssoId: sso,
      useEnterpriseProfile: true,
    });
    expect((await pages.open(`/services/enter/${withdrawn}`)).status).toBe(410);
    await pages.enter(personal);
    await pages.enter(others);
    const record = await h.domain.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'grant.removed')
      .where('target', '=', sso)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(record.details!)).toMatchObject({
      profile: 'enterprise',
      tokensWithdrawn: 1,
    });
  });
});

describe('a session re-checks its person on every request', () => {
  it('ends when the SSO is deleted (E2): a 403 page, and the posted action does not run', async () => {
    const sso = await person();
    const { tx, cookie, page } = await participantSession(sso);
    expect(await h.a.json.enterprise.deleteSso({ sso })).toBe(true);
    expectWithdrawn(
      cookie,
      await pages.post(cookie, { csrf: csrfOf(page), action: 'note', text: 'after' }),
      'You can no longer act for this enterprise',
    );
    expect(await noteOf(tx)).toBeUndefined();
    await expectEnded(cookie);
  });

  it('ends when the role on the transaction is removed (T7, T4)', async () => {
    const sso = await person();
    const one = await participantSession(sso);
    const two = await participantSession(sso);
    expect(
      await h.a.json.transactions.removeTransactionRole({ transactionId: one.tx, userSSO: sso }),
    ).toBe(1);
    expectWithdrawn(
      one.cookie,
      await pages.page(one.cookie),
      'Your role on this transaction was removed',
    );
    // The other transaction's session goes on, until T4 removes every role.
    expect((await pages.page(two.cookie)).status).toBe(200);
    expect(await h.a.json.transactions.removeAllRoles({ userSSO: sso })).toBe(1);
    expectWithdrawn(
      two.cookie,
      await pages.page(two.cookie),
      'Your role on this transaction was removed',
    );
  });

  it('a T5 or T8 token issued before T7 or T4 no longer enters: the 410 page, and no role comes back', async () => {
    const sso = await person();
    const other = await person();
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const elsewhere = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const t5 = (transactionId: string, userSSO: string) =>
      h.a.json.transactions.createTransactionToken({ transactionId, userSSO });
    const t8 = (transactionId: string, userSSO: string) =>
      h.a.json.transactions.createAnonymousToken({ transactionId, userSSO, action: 'note' });
    const held = { participant: await t5(tx, sso), anonymous: await t8(tx, sso) };
    const kept = { elsewhere: await t5(elsewhere, sso), otherPerson: await t5(tx, other) };
    // No role yet: the tokens alone would give them.
    expect(
      await h.a.json.transactions.removeTransactionRole({ transactionId: tx, userSSO: sso }),
    ).toBe(0);
    for (const token of Object.values(held)) {
      const answer = await pages.open(`/services/enter/${token}`);
      expect(answer.status).toBe(410);
      expect(answer.text).toContain('This link is no longer valid');
    }
    expect(await h.a.json.transactions.searchTransactions({ sso })).toEqual([]);
    // T7 withdrew that SSO's tokens on that transaction alone.
    expect((await pages.enter(kept.otherPerson)).page.status).toBe(200);
    const later = await t5(tx, sso);
    expect(await h.a.json.transactions.removeAllRoles({ userSSO: sso })).toBe(0);
    for (const token of [kept.elsewhere, later])
      expect((await pages.open(`/services/enter/${token}`)).status).toBe(410);
    // A token issued after them is the client giving the role again: it enters.
    const entered = await pages.enter(await t5(tx, sso));
    expect(entered.page.text).toContain('<dd id="your-role">Participant</dd>');
  });

  it('the address without a handle goes to the last used session whose person may still act', async () => {
    const sso = await person();
    const [a, b, c, d] = [
      await participantSession(sso),
      await participantSession(sso),
      await participantSession(sso),
      await participantSession(sso),
    ];
    // Used last: a, then b, c and d.
    for (const session of [d, c, b, a]) expect((await pages.page(session.cookie)).status).toBe(200);
    const all = [d, c, b, a].map((session) => session.cookie).join('; ');
    const withdraw = (session: typeof a) =>
      h.a.json.transactions.removeTransactionRole({ transactionId: session.tx, userSSO: sso });
    await withdraw(a);
    await withdraw(b);
    // Not to the last used, whose page would only say it ended: to the one that goes on. The
    // ones whose person may not act are ended on the way, and their cookies dropped.
    const bare = await pages.open('/services/session', all);
    expect(bare.status).toBe(303);
    expect(bare.headers.get('location')).toBe(sessionPathOf(c.cookie));
    expect(bare.headers.getSetCookie()).toEqual([dropped(a.cookie), dropped(b.cookie)]);
    for (const ended of [a, b]) await expectEnded(ended.cookie);
    // None left that stands: the page of the one used last says why, as its own page would; every
    // such session ends, and every cookie goes.
    await withdraw(c);
    await withdraw(d);
    const none = await pages.open('/services/session', all);
    expect(none.status).toBe(403);
    expect(none.text).toContain('Your role on this transaction was removed');
    expect(none.headers.getSetCookie()).toEqual([dropped(d.cookie), dropped(c.cookie)]);
    for (const ended of [c, d]) await expectEnded(ended.cookie);
  });

  it('ends 12 hours after it started, however active', async () => {
    const sso = await person();
    const { cookie } = await participantSession(sso);
    const started = (agoMs: number) =>
      h.domain.db
        .updateTable('browser_sessions')
        .set({ created_at: new Date(Date.now() - agoMs).toISOString() })
        .where('id_hash', '=', hashToken(cookie.split('=')[1]!))
        .execute();
    // Used a minute ago (never idle), started 11 h 59 min ago: still on.
    await started(12 * 3_600_000 - 60_000);
    expect((await pages.page(cookie)).status).toBe(200);
    await started(12 * 3_600_000 + 1000);
    const ended = await expectEnded(cookie);
    expect(ended.text).toContain('12 hours after it started');
  });

  it('an anonymous (T8) session rests on the SSO its token was for and on the transaction; it never shows that SSO', async () => {
    const sso = await person();
    const anonymous = async () => {
      const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
      const token = await h.a.json.transactions.createAnonymousToken({
        transactionId: tx,
        userSSO: sso,
      });
      return { tx, ...(await pages.enter(token)) };
    };
    const one = await anonymous();
    expect(one.page.text).toContain('<dd id="your-role">Guest</dd>');
    expect(one.page.text).not.toContain(sso);
    await h.a.json.transactions.removeTransactionRole({ transactionId: one.tx, userSSO: sso });
    expectWithdrawn(one.cookie, await pages.page(one.cookie), 'This link was withdrawn');

    const two = await anonymous();
    for (const move of ['cancel', 'archive'] as const)
      await transitionTransaction(h.domain, h.a.enterpriseId, two.tx, move);
    expectWithdrawn(two.cookie, await pages.page(two.cookie), 'This transaction is archived');
  });
});

describe('a page runs nothing on a transaction whose systemStatus forbids runs', () => {
  it('on a CANCELLED transaction no action is offered: a posted one is a 403 page, runs nothing, and keeps the session', async () => {
    const sso = await person();
    const { tx, cookie, page } = await participantSession(sso);
    expect(page.text).toContain('value="note"');
    await transitionTransaction(h.domain, h.a.enterpriseId, tx, 'cancel');
    const still = await pages.page(cookie);
    expect(still.status).toBe(200);
    expect(still.text).toContain('<dd id="status">New (cancelled)</dd>');
    expect(still.text).not.toContain('value="note"');
    const refused = await pages.post(cookie, {
      csrf: csrfOf(page),
      action: 'note',
      text: 'too late',
    });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.type).toBe('text/html; charset=utf-8');
    expect(refused.text).toContain('This action is not offered to you now');
    expect(await noteOf(tx)).toBeUndefined();
    // The person may still look at it.
    expect((await pages.page(cookie)).status).toBe(200);
  });

  it('an entry with an action on a CANCELLED transaction enters but does not run it, and says why', async () => {
    const sso = await person();
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    await transitionTransaction(h.domain, h.a.enterpriseId, tx, 'cancel');
    const token = await h.a.json.transactions.createAnonymousToken({
      transactionId: tx,
      userSSO: sso,
      action: 'note',
    });
    const { page } = await pages.enter(token);
    expect(page.text).toContain('“Keep the note” failed');
    expect(page.text).toContain('cannot run while its systemStatus is CANCELLED');
    expect(await noteOf(tx)).toBeUndefined();
  });
});

/**
 * Runs the wf-tx submit step (on a new transaction, or on `tx`), which mails `approver` a link;
 * the transaction and the link's path.
 */
async function mailTo(approver: string, onTx?: string): Promise<{ tx: string; path: string }> {
  const tx = onTx ?? (await h.a.json.transactions.createTransaction({ palId: 'wf-tx' }));
  const before = h.mails.length;
  const postData = { step: 'submit', approver, amount: '7' };
  await h.a.json.transactions.runTransactionWorkflow({
    transactionId: tx,
    transactionContent: {
      postData: Object.entries(postData).map(([name, value]) => ({ name, value })),
    },
  });
  expect(h.mails.length).toBe(before + 1);
  const text = h.mails.at(-1)!.mail.text!;
  return { tx, path: /http:\/\/pal\.example\.test:8443(\/services\/mail\?\S+)/.exec(text)![1]! };
}

describe('links in mails', () => {
  const confirm = (path: string) => pages.post(undefined, {}, {}, path);
  const expectGone = (answer: Answer) => {
    expect(answer.status, answer.text).toBe(410);
    expect(answer.text).toContain('This link is no longer valid');
    expect(answer.headers.get('set-cookie')).toBeNull();
  };

  it('enter only while the recipient is ACTIVE, and the session ends with them', async () => {
    const recipient = await person();
    const { tx, path } = await mailTo(recipient);
    const entered = await confirm(path);
    expect(entered.status).toBe(303);
    const cookie = entered.headers.get('set-cookie')!.split(';')[0]!;
    expect((await pages.page(cookie)).text).toContain(`approved by ${recipient}`);
    await h.a.json.enterprise.deleteSso({ sso: recipient });
    expectWithdrawn(cookie, await pages.page(cookie), 'You can no longer act for this enterprise');
    expectGone(await pages.open(path));
    expectGone(await confirm(path));
    expect((await h.a.json.transactions.getTransaction({ id: tx })).status).toBe('APPROVED');
  });

  it('enter only while the transaction is not ARCHIVED', async () => {
    const recipient = await person();
    const { tx, path } = await mailTo(recipient);
    for (const move of ['cancel', 'archive'] as const)
      await transitionTransaction(h.domain, h.a.enterpriseId, tx, move);
    expectGone(await pages.open(path));
    expectGone(await confirm(path));
    expect((await h.a.json.transactions.getTransaction({ id: tx })).status).toBe('SUBMITTED');
  });

  it(`keep only the ${MAIL_LINK_SESSIONS} sessions a person opened last on a transaction: one more ends the oldest`, async () => {
    const recipient = await person();
    const other = await person();
    const { tx, path } = await mailTo(recipient);
    // The same person on another transaction, and another person on this one, keep theirs.
    const elsewhere = await mailTo(recipient);
    const others = await mailTo(other, tx);
    const enter = async (link: string) => {
      const entered = await confirm(link);
      expect(entered.status, entered.text).toBe(303);
      return entered.headers.get('set-cookie')!.split(';')[0]!;
    };
    const kept = [await enter(elsewhere.path), await enter(others.path)];
    const cookies: string[] = [];
    for (let i = 0; i <= MAIL_LINK_SESSIONS; i++) {
      cookies.push(await enter(path));
      // Which is oldest is told by the start's millisecond.
      await new Promise((done) => setTimeout(done, 2));
    }

    const ended = await expectEnded(cookies[0]!);
    expect(ended.text).toContain(
      `a link from a mail keeps only the ${MAIL_LINK_SESSIONS} pages it opened last`,
    );
    for (const cookie of [...cookies.slice(1), ...kept])
      expect((await pages.page(cookie)).status).toBe(200);
    const records = await h.domain.db
      .selectFrom('audit_log')
      .select(['target', 'details'])
      .where('action', '=', 'session.ended')
      .where('target', 'in', [tx, elsewhere.tx])
      .execute();
    expect(records).toHaveLength(1);
    expect(records[0]!.target).toBe(tx);
    expect(JSON.parse(records[0]!.details!)).toMatchObject({
      sso: recipient,
      reason: 'superseded',
    });
  });

  it("keep the session a link opens now even when its node's clock is behind the others", async () => {
    const recipient = await person();
    const { path } = await mailTo(recipient);
    const enter = async (link: string) => {
      const entered = await confirm(link);
      expect(entered.status, entered.text).toBe(303);
      return entered.headers.get('set-cookie')!.split(';')[0]!;
    };
    const cookies: string[] = [];
    for (let i = 0; i < MAIL_LINK_SESSIONS; i++) cookies.push(await enter(path));
    const now = h.domain.now.bind(h.domain);
    const behind = vi
      .spyOn(h.domain, 'now')
      .mockImplementation(() => new Date(now().getTime() - 60_000));
    let latest: string;
    try {
      latest = await enter(path);
    } finally {
      behind.mockRestore();
    }
    expect((await pages.page(latest)).status).toBe(200);
    // The oldest of the others ended in its place.
    await expectEnded(cookies[0]!);
    for (const cookie of cookies.slice(1)) expect((await pages.page(cookie)).status).toBe(200);
  });

  it('on a CANCELLED transaction the link enters but runs nothing', async () => {
    const recipient = await person();
    const { tx, path } = await mailTo(recipient);
    await transitionTransaction(h.domain, h.a.enterpriseId, tx, 'cancel');
    const entered = await confirm(path);
    expect(entered.status).toBe(303);
    const page = await pages.page(entered.headers.get('set-cookie')!.split(';')[0]!);
    expect(page.text).toContain('cannot run while its systemStatus is CANCELLED');
    expect((await h.a.json.transactions.getTransaction({ id: tx })).status).toBe('SUBMITTED');
  });
});
