// A workflow's answer as a session keeps it and its page shows it (docs/web-mode.md, "What the
// action gets, and what the person sees after"), over real HTTP: a pal whose runs return
// thousands of messages (test/fixtures/workflow-pals/wf-chatty) leaves a session that keeps the
// first 100 and a line saying how many more there were, so that every view of its page, which
// runs nothing and so counts against no cap, stays small.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/ids.js';
import { MORE_MESSAGES, OUTCOME_MESSAGES_MAX, type ActionOutcome } from '../src/domain/sessions.js';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { startHarness, type Harness } from './harness.js';
import { csrfOf, sessionBrowser, type SessionBrowser } from './session-pages.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');

let h: Harness;
let pages: SessionBrowser;
beforeAll(async () => {
  h = await startHarness();
  pages = sessionBrowser(h.url);
  await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, 'wf-chatty'));
});
afterAll(() => h?.close());

/** A participant's session on a new wf-chatty transaction: its `enter` answered 20,000 messages. */
async function chattySession() {
  const sso = await createSso(h.domain, h.a.enterpriseId, {
    firstName: 'Chad',
    lastName: 'Chatty',
    email: `chad-${Math.random().toString(36).slice(2)}@outcome.test`,
  });
  const transactionId = await h.a.json.transactions.createTransaction({ palId: 'wf-chatty' });
  const token = await h.a.json.transactions.createTransactionToken({ transactionId, userSSO: sso });
  return pages.enter(token);
}

/** The outcome the session of `cookie` keeps, as its row holds it. */
async function storedOutcome(cookie: string): Promise<{ text: string; outcome: ActionOutcome }> {
  const row = await h.domain.db
    .selectFrom('browser_sessions')
    .select('outcome')
    .where('id_hash', '=', hashToken(cookie.split('=')[1]!))
    .executeTakeFirstOrThrow();
  return { text: row.outcome!, outcome: JSON.parse(row.outcome!) as ActionOutcome };
}

/** The items of the page's outcome region, as text. */
function outcomeItems(html: string): string[] {
  const region = /<section id="outcome"[^>]*>([\s\S]*?)<\/section>/.exec(html)![1]!;
  return [...region.matchAll(/<li[^>]*>([\s\S]*?)<\/li>/g)].map((m) => m[1]!);
}

describe('the outcome a session page shows', () => {
  it("an entry's 20,000 messages: the page shows the first 100 and how many more there were, at every view", async () => {
    const { cookie, page } = await chattySession();
    const expected = [
      ...Array.from({ length: OUTCOME_MESSAGES_MAX }, (_, k) => `m${k}`),
      'and 19,900 more messages',
    ];
    expect(outcomeItems(page.text)).toEqual(expected);
    expect(page.text).toContain(`<li data-type="${MORE_MESSAGES}">and 19,900 more messages</li>`);
    expect(page.text).not.toContain('m100<');
    // The row holds no more than the page shows, so a reload reads and writes no more either.
    const { text, outcome } = await storedOutcome(cookie);
    expect(outcome.messages).toHaveLength(OUTCOME_MESSAGES_MAX + 1);
    expect(text.length).toBeLessThan(10_000);
    const again = await pages.page(cookie);
    expect(again.status).toBe(200);
    expect(outcomeItems(again.text)).toEqual(expected);
    expect(again.text.length).toBeLessThan(50_000);
  });

  it("a button's failed run: its first problems, a long one cut, and how many more there were", async () => {
    const { cookie, page } = await chattySession();
    const posted = await pages.post(cookie, { csrf: csrfOf(page), action: 'check' });
    expect(posted.status, posted.text).toBe(303);
    const shown = await pages.page(cookie);
    expect(shown.text).toContain('“Check everything” failed');
    const items = outcomeItems(shown.text);
    expect(items).toHaveLength(OUTCOME_MESSAGES_MAX + 1);
    expect(items[0]).toBe('the first problem');
    expect(items[1]).toBe(`${'x'.repeat(2000)}… (cut to 2000 of 100000 characters)`);
    expect(items.slice(2, OUTCOME_MESSAGES_MAX)).toEqual(
      Array.from({ length: OUTCOME_MESSAGES_MAX - 2 }, (_, k) => `problem ${k + 2}`),
    );
    expect(items.at(-1)).toBe('and 4,900 more messages');
    const { outcome } = await storedOutcome(cookie);
    expect(outcome).toMatchObject({ action: 'check', ran: true, success: false, pressed: true });
    expect(outcome.messages).toHaveLength(OUTCOME_MESSAGES_MAX + 1);
    expect(JSON.stringify(outcome).length).toBeLessThan(10_000);
  });
});
