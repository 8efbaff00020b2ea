// The session page in real Chromium (docs/web-mode.md), end to end over HTTP: a participant enters
// a web-mode transaction with a T5 token, sees the claim form's pages drawn by pdf.js with the
// fields where they sit, fills every kind of control, draws one signature with a mouse and one
// with a finger (touch input), submits, and sees the workflow's answer; the workflow got the
// values and the drawn PNGs. On a 360 px phone and on a desktop; again with JavaScript off (a
// signature by name, a box ticked); a person without the role sees values and no buttons. axe-core finds no
// serious or critical violation on any page, and the page breaks no rule of its CSP.
import { AxeBuilder } from '@axe-core/playwright';
import type { GivenSignature } from '@pal-workflow/types';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { readVariables, transactionScope } from '../src/storage/variables.js';
import {
  inkedPixels as inkedPngPixels,
  launchChromium,
  pdfPagesDrawn,
  SCREENSHOTS,
} from './browser.js';
import { tempDir } from './helpers.js';
import { startHarness, type Harness } from './harness.js';
import { WEB_PAL_ID, writeWebPal } from './web-pal.js';

// The functions passed to page.evaluate run in Chromium; the test project has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const window: any;
type HTMLCanvasElement = any;
type HTMLInputElement = any;
/* eslint-enable @typescript-eslint/no-explicit-any */

let h: Harness;
let browser: Browser;
let closeBrowser: () => Promise<void>;
let sso: string;
const folder = tempDir('web-pal-');

beforeAll(async () => {
  h = await startHarness();
  ({ browser, close: closeBrowser } = await launchChromium());
  await deployPal(h.domain, h.a.enterpriseId, await writeWebPal(folder.path));
  sso = await createSso(h.domain, h.a.enterpriseId, {
    firstName: 'Ada',
    lastName: 'Claimant',
    email: 'ada.claimant@example.test',
  });
});
afterAll(async () => {
  await closeBrowser?.();
  await h?.close();
  folder.remove();
});

const PHONE = { width: 360, height: 740 };
const DESKTOP = { width: 1280, height: 900 };
/** A tablet in landscape: desktop-wide, but a finger (Chromium's touch reports `pointer: coarse`). */
const TABLET = { width: 1024, height: 768 };

interface Received {
  values: Record<string, string>;
  signatures: GivenSignature[];
}

async function newTransaction(): Promise<string> {
  return h.a.json.transactions.createTransaction({ palId: WEB_PAL_ID });
}

async function participantToken(transactionId: string): Promise<string> {
  return h.a.json.transactions.createTransactionToken({ transactionId, userSSO: sso });
}

/** What the workflow's `submit` kept: the input it was given. */
async function received(transactionId: string): Promise<Received | undefined> {
  const vars = await readVariables(h.domain.db, transactionScope(transactionId));
  return vars.values.input ? (JSON.parse(vars.values.input) as Received) : undefined;
}

/** A context whose pages record what the browser refused under the page's CSP, and errors. */
async function newContext(options: Parameters<Browser['newContext']>[0]): Promise<{
  context: BrowserContext;
  page: Page;
  problems: string[];
}> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy|Refused to/i.test(m.text()))
      problems.push(`${m.text()} ${m.location().url}`);
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('response', (r) => {
    if (r.status() >= 400 && !/\/services\/session(\/[\w-]{12})?$/.test(r.url()))
      problems.push(`${r.status()} ${r.url()}`);
  });
  return { context, page, problems };
}

/**
 * A new transaction entered by its participant's token in a context of its own, once the page's
 * pads are ready; `before` prepares the page first (its clock, say).
 */
async function enterNewTransaction(
  options: Parameters<Browser['newContext']>[0],
  before?: (page: Page) => Promise<void>,
): Promise<{ tx: string; context: BrowserContext; page: Page; problems: string[] }> {
  const tx = await newTransaction();
  const { context, page, problems } = await newContext(options);
  await before?.(page);
  await page.goto(`${h.url}/services/enter/${await participantToken(tx)}`);
  await page.waitForSelector('main[data-pads-ready="true"]');
  return { tx, context, page, problems };
}

/** A screenshot of the page as it rests; with JavaScript on, once its PDF pages are drawn. */
async function shot(page: Page, name: string, javaScript = true): Promise<void> {
  if (javaScript) expect(await pdfPagesDrawn(page)).toMatch(/^(true|none)$/);
  // At the bottom, so that the bar of buttons (sticky on a wide screen) is drawn where it rests.
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.screenshot({ path: join(SCREENSHOTS, `session-${name}.png`), fullPage: true });
}

/** axe-core's serious and critical findings on the page as it is now (none expected). */
async function expectAccessible(page: Page, where: string): Promise<void> {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad, where).toEqual([]);
}

/** How many pixels of a PNG are drawn on (not transparent and not white), decoded by Chromium. */
const inkedPixels = (base64: string) => inkedPngPixels(browser, base64);

/** A stroke across a signature pad with the mouse. */
async function drawWithMouse(page: Page, signatureId: string): Promise<void> {
  const pad = page.locator(`[data-signature="${signatureId}"] canvas`);
  // In the middle of the screen: the sticky bar of buttons covers the bottom of it.
  await pad.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  const box = (await pad.boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.1, box.y + box.height * 0.6);
  await page.mouse.down();
  for (let i = 1; i <= 20; i++)
    await page.mouse.move(
      box.x + box.width * (0.1 + 0.04 * i),
      box.y + box.height * (0.6 - 0.3 * Math.sin(i / 3)),
    );
  await page.mouse.up();
}

/** A stroke with a finger: real touch input, which Chromium turns into pointerType "touch". */
async function drawWithFinger(page: Page, signatureId: string): Promise<void> {
  const pad = page.locator(`[data-signature="${signatureId}"] canvas`);
  await pad.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  const box = (await pad.boundingBox())!;
  const cdp = await page.context().newCDPSession(page);
  const at = (i: number) => ({
    x: box.x + box.width * (0.15 + 0.035 * i),
    y: box.y + box.height * (0.5 + 0.25 * Math.cos(i / 2)),
  });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [at(0)] });
  for (let i = 1; i <= 20; i++)
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [at(i)] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

/** Fills every kind of control, as a person would (by their labels). */
async function fillEveryControl(page: Page): Promise<void> {
  await page.getByLabel('Employee name').fill('Ada Lovelace');
  await page.getByLabel('Purpose').fill('Train to the Zurich meeting\nand back');
  await page.getByLabel('Category').selectOption('Travel');
  await page.getByLabel('Amount').fill('123.40');
  await page.getByRole('radio', { name: 'Cash' }).check();
  await page.getByLabel('Receipts attached').check();
  // CHECKBOXCHECKED starts checked; unchecked, it must still post "false".
  expect(await page.getByLabel('Policy read').isChecked()).toBe(true);
  await page.getByLabel('Policy read').uncheck();
}

const EXPECTED_VALUES = {
  employeeName: 'Ada Lovelace',
  // Typed with a line break, which Chromium posts as CRLF: kept as the box has it (LF).
  purpose: 'Train to the Zurich meeting\nand back',
  category: 'Travel',
  amount: '123.40',
  paidBy: 'Cash',
  receiptsAttached: 'true',
  policyRead: 'false',
};

describe('the session page in Chromium, with JavaScript', () => {
  it.each([
    ['phone', PHONE, true],
    ['tablet', TABLET, true],
    ['desktop', DESKTOP, false],
  ] as const)(
    '%s: enter, see the pages, fill every control, sign, submit',
    async (name, viewport, hasTouch) => {
      const tx = await newTransaction();
      const { context, page, problems } = await newContext({ viewport, hasTouch });
      const entered = await page.goto(`${h.url}/services/enter/${await participantToken(tx)}`);
      expect(entered?.status()).toBe(200);
      expect(page.url()).toMatch(new RegExp(`^${h.url}/services/session/[\\w-]{12}$`));
      expect(entered?.headers()['content-security-policy']).toContain("script-src 'self'");
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Expense claim');

      // Both pages drawn by pdf.js into canvases, and the pads ready.
      await page.waitForSelector('main[data-pages-drawn="true"]');
      await page.waitForSelector('main[data-pads-ready="true"]');
      expect(await page.locator('.page-canvas').count()).toBe(2);
      const inked = await page
        .locator('.page-canvas')
        .first()
        .evaluate((c: HTMLCanvasElement) => {
          const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
          let n = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i]! < 128) n++;
          return n;
        });
      expect(inked, 'the page shows its printed text').toBeGreaterThan(500);
      await shot(page, `${name}-entered`);
      await expectAccessible(page, `${name}: entered`);

      // Where the name field sits: with a mouse, in its box on the page (x 200/595 of the page's
      // width); for a finger the control is listed under the page, at full width, large enough
      // to hit and with text large enough that iOS does not zoom in on it.
      const sheet = (await page.locator('.sheet').first().boundingBox())!;
      const nameField = page.getByLabel('Employee name');
      const nameBox = (await nameField.boundingBox())!;
      if (!hasTouch) {
        expect(Math.abs(nameBox.x - (sheet.x + (sheet.width * 200) / 595))).toBeLessThan(3);
        expect(Math.abs(nameBox.y - (sheet.y + (sheet.height * 120) / 842))).toBeLessThan(3);
      } else {
        expect(nameBox.y).toBeGreaterThan(sheet.y + sheet.height);
        expect(nameBox.height).toBeGreaterThanOrEqual(44);
        expect(
          await nameField.evaluate((e) => parseFloat(window.getComputedStyle(e).fontSize)),
        ).toBeGreaterThanOrEqual(16);
        // Nothing is wider than the screen.
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          viewport.width,
        );
      }

      // Read-only for a participant: the manager's note is a value, not a control.
      expect(await page.locator('[name="approvalNote"]').count()).toBe(0);
      expect(await page.locator('.readonly').first().textContent()).toContain(
        'Waiting for the manager',
      );
      // The owner's signature is not theirs to give.
      expect(await page.locator('[data-signature="manager"] canvas').count()).toBe(0);
      expect(await page.locator('[data-signature="manager"]').textContent()).toContain(
        'Not signed yet',
      );

      await fillEveryControl(page);
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { pointerTypes: string[] }).pointerTypes = seen;
        document.addEventListener(
          'pointerdown',
          (e: { pointerType: string }) => seen.push(e.pointerType),
          true,
        );
      });
      await drawWithMouse(page, 'employee');
      if (hasTouch) await drawWithFinger(page, 'witness');
      else await drawWithMouse(page, 'witness');
      expect(
        await page.evaluate(() => (window as unknown as { pointerTypes: string[] }).pointerTypes),
      ).toEqual(['mouse', hasTouch ? 'touch' : 'mouse']);
      // The drawing shows in its box on the page.
      expect(await page.locator('[data-marker="employee"] img').count()).toBe(1);
      await shot(page, `${name}-filled`);

      await Promise.all([
        page.waitForURL(`${h.url}/services/session/*`, { waitUntil: 'load' }),
        page.getByRole('button', { name: 'Submit the claim' }).click(),
      ]);
      const outcome = page.locator('#outcome');
      expect(await outcome.textContent()).toContain(
        'Claim of Ada Lovelace received with 2 signature(s).',
      );
      await shot(page, `${name}-submitted`);
      await expectAccessible(page, `${name}: outcome`);

      const input = await received(tx);
      expect(input?.values).toEqual(EXPECTED_VALUES);
      const byId = new Map(input!.signatures.map((s) => [s.id, s]));
      expect([...byId.keys()].sort()).toEqual(['employee', 'witness']);
      for (const id of ['employee', 'witness']) {
        const s = byId.get(id)!;
        expect(s).toMatchObject({ role: 'participant', sso, kind: 'DRAWN' });
        const png = await inkedPixels(s.image!);
        expect(png.width).toBeGreaterThan(100);
        expect(png.ink, `${id}: the drawn stroke is in the PNG`).toBeGreaterThan(50);
      }
      // Submitted: the transaction moved on, and "Submit" is no longer offered.
      expect(await page.getByRole('button', { name: 'Submit the claim' }).count()).toBe(0);
      expect(problems).toEqual([]);
      await context.close();
    },
  );
});

describe('a form that does not go through', () => {
  it('a missing required signature and a failed run keep what was typed and drawn', async () => {
    const { tx, context, page, problems } = await enterNewTransaction({ viewport: DESKTOP });
    await fillEveryControl(page);
    const submit = () =>
      Promise.all([
        page.waitForURL(`${h.url}/services/session/*`, { waitUntil: 'load' }),
        page.getByRole('button', { name: 'Submit the claim' }).click(),
      ]);

    // Not signed: nothing runs, the page says so, and the values are back in their controls.
    await submit();
    const outcome = page.locator('#outcome');
    expect(await outcome.textContent()).toContain(
      'Sign before you go on: your signature is required.',
    );
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('outcome');
    expect(await received(tx)).toBeUndefined();
    expect(await page.getByLabel('Employee name').inputValue()).toBe('Ada Lovelace');
    expect(await page.getByLabel('Policy read').isChecked()).toBe(false);
    expect(await page.getByRole('radio', { name: 'Cash' }).isChecked()).toBe(true);
    await shot(page, 'missing-signature');
    await expectAccessible(page, 'a missing signature');

    // A run that fails: its message, and the drawing is back on the pad.
    await page.waitForSelector('main[data-pads-ready="true"]');
    await drawWithMouse(page, 'employee');
    await Promise.all([
      page.waitForURL(`${h.url}/services/session/*`, { waitUntil: 'load' }),
      page.getByRole('button', { name: 'Try a failing run' }).click(),
    ]);
    expect(await outcome.textContent()).toContain('The claim system is down');
    await page.waitForSelector('main[data-pads-ready="true"]');
    expect(await page.locator('[data-marker="employee"] img').count()).toBe(1);
    expect(await page.getByLabel('Category').inputValue()).toBe('Travel');
    await shot(page, 'failed-run');

    // Submitted as it stands: the drawing kept from the failed run is what the workflow gets.
    await submit();
    expect(await outcome.textContent()).toContain('received with 1 signature(s).');
    const input = await received(tx);
    expect(input?.values).toEqual(EXPECTED_VALUES);
    expect(input?.signatures.map((s) => [s.id, s.kind])).toEqual([['employee', 'DRAWN']]);
    expect((await inkedPixels(input!.signatures[0]!.image!)).ink).toBeGreaterThan(50);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('a value pasted with control characters', () => {
  // A 400 page answered such a form: it named no box, its link led to the page without what was
  // typed, and the character was invisible in the box anyway.
  it.each([
    ['with JavaScript', true],
    ['without JavaScript', false],
  ] as const)(
    '%s: the page names the box, shows what is left in it, and keeps the rest as typed',
    async (_name, javaScriptEnabled) => {
      const tx = await newTransaction();
      const { context, page } = await newContext({
        viewport: PHONE,
        javaScriptEnabled,
        hasTouch: true,
      });
      await page.goto(`${h.url}/services/enter/${await participantToken(tx)}`);
      if (javaScriptEnabled) await page.waitForSelector('main[data-pads-ready="true"]');
      await fillEveryControl(page);
      // Pasted: a NUL and an escape sequence in the name, SOH in the textarea.
      const paste = (label: string, value: string) =>
        page.getByLabel(label).evaluate((el, v) => {
          (el as HTMLInputElement).value = v;
          el.dispatchEvent(new window.Event('input', { bubbles: true }));
        }, value);
      await paste('Employee name', 'Ada\u0000 Love\u001b[0mlace');
      await paste('Purpose', 'Train to the Zurich meeting\u0001\nand back');
      if (!javaScriptEnabled)
        await page
          .locator('[data-signature="employee"]')
          .getByLabel('Sign as Ada Claimant')
          .check();
      // The page after the 303: its address is the one the form was on, so waitForURL would not
      // wait for it.
      const submit = async () => {
        const [answer] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST'),
          page.waitForResponse(
            (r) => r.request().method() === 'GET' && /\/session\/[\w-]{12}$/.test(r.url()),
          ),
          page.getByRole('button', { name: 'Submit the claim' }).tap(),
        ]);
        await page.waitForLoadState('load');
        return answer;
      };
      const answer = await submit();
      expect(answer.status()).toBe(303);
      expect(await received(tx)).toBeUndefined();

      // Each box says what was taken out of it, beside it, and holds what is left.
      const name = page.getByLabel('Employee name');
      expect(await name.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#error-employeeName').textContent()).toContain(
        '2 characters that cannot be kept (invisible control characters',
      );
      expect(await name.inputValue()).toBe('Ada Love[0mlace');
      expect(await page.getByLabel('Purpose').inputValue()).toBe(
        'Train to the Zurich meeting\nand back',
      );
      expect(await page.locator('#error-purpose').textContent()).toContain(
        'a character that cannot be kept',
      );
      // The list of messages links to the box, by its label.
      expect(
        await page
          .locator('#outcome')
          .getByRole('link', { name: 'Employee name' })
          .getAttribute('href'),
      ).toBe('#error-employeeName');
      // The rest, as typed.
      expect(await page.getByLabel('Category').inputValue()).toBe('Travel');
      expect(await page.getByLabel('Amount').inputValue()).toBe('123.40');
      expect(await page.getByRole('radio', { name: 'Cash' }).isChecked()).toBe(true);
      expect(await page.getByLabel('Receipts attached').isChecked()).toBe(true);
      expect(await page.getByLabel('Policy read').isChecked()).toBe(false);
      await shot(page, `control-characters-${javaScriptEnabled ? 'js' : 'nojs'}`, false);

      // Corrected in the box alone, the form goes through.
      await name.fill('Ada Lovelace');
      if (javaScriptEnabled) {
        await page.waitForSelector('main[data-pads-ready="true"]');
        await drawWithMouse(page, 'employee');
      } else if (
        !(await page
          .locator('[data-signature="employee"]')
          .getByLabel('Sign as Ada Claimant')
          .isChecked())
      )
        await page
          .locator('[data-signature="employee"]')
          .getByLabel('Sign as Ada Claimant')
          .check();
      await submit();
      expect(await page.locator('#outcome').textContent()).toContain(
        'Claim of Ada Lovelace received with 1 signature(s).',
      );
      expect((await received(tx))?.values).toEqual(EXPECTED_VALUES);
      await context.close();
    },
  );
});

describe('a second tap on a slow connection', () => {
  it('sends the form once, and the person sees the first answer, not a refusal', async () => {
    const { context, page, problems } = await enterNewTransaction({
      viewport: PHONE,
      hasTouch: true,
    });
    await fillEveryControl(page);
    await drawWithFinger(page, 'employee');
    // The form's POST takes 1.5 s to reach the server, as on a slow mobile network.
    let posts = 0;
    await page.route(/\/services\/session\/[\w-]{12}$/, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      posts += 1;
      await new Promise((done) => setTimeout(done, 1500));
      await route.continue();
    });
    // Two presses 300 ms apart, from within the page (Playwright's own click waits for the
    // navigation it starts); what the form showed between them is kept in sessionStorage.
    await page.evaluate(() => {
      const button = [...document.querySelectorAll('button')].find(
        (b: { textContent: string }) => b.textContent.trim() === 'Submit the claim',
      );
      button.click();
      setTimeout(() => {
        const form = document.getElementById('session-form');
        sessionStorage.setItem('between', `${form.className}|${form.getAttribute('aria-busy')}`);
        button.click();
      }, 300);
    });
    await page.locator('#outcome', { hasText: 'received with' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('between'))).toBe('sending|');
    expect(posts).toBe(1);
    expect(await page.locator('#outcome').textContent()).toContain('received with 1 signature(s).');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Expense claim');
    // The page it landed on may send again.
    expect(await page.locator('form.sending').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('a person who fills in a long form', () => {
  it('keeps their session alive while they type: a HEAD of the page at most every five minutes', async () => {
    const { tx, context, page, problems } = await enterNewTransaction({ viewport: PHONE }, (page) =>
      page.clock.install(),
    );
    const heads: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'HEAD') heads.push(new URL(r.url()).pathname);
    });
    const lastSeen = async () =>
      (
        await h.domain.db
          .selectFrom('browser_sessions')
          .select('last_seen_at')
          .where('transaction_id', '=', tx)
          .executeTakeFirstOrThrow()
      ).last_seen_at;
    const name = page.getByLabel('Employee name');
    await name.fill('Ada');
    expect(heads).toEqual([]);
    const before = await lastSeen();
    // Six minutes of reading later, the next keystroke tells the server the person is there.
    await page.clock.fastForward('06:00');
    await name.pressSequentially(' L');
    await expect.poll(() => heads).toEqual([new URL(page.url()).pathname]);
    await expect.poll(lastSeen).not.toBe(before);
    // And not again within five minutes.
    await name.pressSequentially('ovelace');
    await page.waitForTimeout(200);
    expect(heads).toHaveLength(1);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('widths between a phone and a desktop', () => {
  it('no width scrolls the page sideways', async () => {
    const tx = await newTransaction();
    const { context, page } = await newContext({ viewport: DESKTOP });
    await page.goto(`${h.url}/services/enter/${await participantToken(tx)}`);
    await page.waitForSelector('main[data-pads-ready="true"]');
    const wider: string[] = [];
    for (const width of [360, 600, 768, 800, 900, 1000, 1040, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
      if (scroll > width) wider.push(`${width}: ${scroll}`);
    }
    expect(wider).toEqual([]);
    await context.close();
  });
});

describe('two links opened in one browser', () => {
  it('each tab acts for its own transaction, however the person goes back, reloads or switches', async () => {
    const first = await newTransaction();
    const second = await newTransaction();
    for (const [id, name] of [
      [first, 'Claim for February'],
      [second, 'Claim for March'],
    ])
      await h.domain.db
        .updateTable('transactions')
        .set({ name, name_key: name.toLowerCase() })
        .where('id', '=', id!)
        .execute();
    const { context, page, problems } = await newContext({ viewport: PHONE });
    await page.goto(`${h.url}/services/enter/${await participantToken(first)}`);
    await page.waitForSelector('main[data-pads-ready="true"]');
    // The person follows a second link in another tab of the same browser.
    const other = await context.newPage();
    await other.goto(`${h.url}/services/enter/${await participantToken(second)}`);
    await other.waitForSelector('main[data-pads-ready="true"]');
    expect(await other.locator('h1').textContent()).toBe('Claim for March');
    expect(other.url()).not.toBe(page.url());

    // Back in the first tab, a reload still shows the first claim; they fill it in and submit.
    await page.bringToFront();
    await page.reload();
    await page.waitForSelector('main[data-pads-ready="true"]');
    expect(await page.locator('h1').textContent()).toBe('Claim for February');
    await fillEveryControl(page);
    await drawWithMouse(page, 'employee');
    const firstUrl = page.url();
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Submit the claim' }).click(),
    ]);
    await page.waitForLoadState('load');
    expect(answer.status()).toBe(303);
    expect(page.url()).toBe(firstUrl);
    expect(await page.locator('#outcome').textContent()).toContain(
      'Claim of Ada Lovelace received with 1 signature(s).',
    );
    expect((await received(first))?.values.employeeName).toBe('Ada Lovelace');
    expect(await received(second)).toBeUndefined();
    // Going back shows the first claim's page again, not the later one.
    await page.goBack();
    expect(await page.locator('h1').textContent()).toBe('Claim for February');

    // The second tab's claim is still its own.
    await other.bringToFront();
    await other.waitForSelector('main[data-pads-ready="true"]');
    expect(await other.locator('h1').textContent()).toBe('Claim for March');
    expect(await other.getByLabel('Employee name').inputValue()).toBe('');
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('the session page without JavaScript', () => {
  it('fills the plain form in page order, signs by typing, and submits', async () => {
    const tx = await newTransaction();
    const { context, page } = await newContext({ viewport: PHONE, javaScriptEnabled: false });
    expect(
      (await page.goto(`${h.url}/services/enter/${await participantToken(tx)}`))?.status(),
    ).toBe(200);
    // No pictures, no pads: the fields in the order of the document, each with its label.
    expect(await page.locator('.page-canvas').count()).toBe(0);
    expect(await page.locator('.pad-canvas').first().isVisible()).toBe(false);
    const order = await page
      .locator('input[type="text"], textarea, select, input[type="radio"], input[type="checkbox"]')
      .evaluateAll((els) => [...new Set(els.map((e) => (e as HTMLInputElement).name))]);
    expect(order).toEqual([
      'employeeName',
      'purpose',
      'category',
      'amount',
      'paidBy',
      'receiptsAttached',
      'policyRead',
      'signature.employee',
      'signature.witness',
    ]);
    await shot(page, 'nojs-entered', false);
    // axe-core needs JavaScript: it checks the same layout in a browser where the page's scripts
    // never load.
    const noScripts = await newContext({ viewport: PHONE });
    await noScripts.context.route(/\.m?js$/, (route) => route.abort());
    await noScripts.page.goto(`${h.url}/services/enter/${await participantToken(tx)}`);
    expect(await noScripts.page.locator('.pad-canvas').first().isVisible()).toBe(false);
    await expectAccessible(noScripts.page, 'no JavaScript: entered');
    await noScripts.context.close();

    await fillEveryControl(page);
    // The person is known: they sign with their name by ticking a box, typing nothing.
    await page.locator('[data-signature="employee"]').getByLabel('Sign as Ada Claimant').check();
    await shot(page, 'nojs-filled', false);
    await Promise.all([
      page.waitForURL(`${h.url}/services/session/*`, { waitUntil: 'load' }),
      page.getByRole('button', { name: 'Submit the claim' }).click(),
    ]);
    expect(await page.locator('#outcome').textContent()).toContain(
      'Claim of Ada Lovelace received with 1 signature(s).',
    );
    await shot(page, 'nojs-submitted', false);
    const input = await received(tx);
    expect(input?.values).toEqual(EXPECTED_VALUES);
    expect(input?.signatures).toEqual([
      expect.objectContaining({ id: 'employee', kind: 'TYPED', text: 'Ada Claimant', sso }),
    ]);
    await context.close();
  });
});

describe('a page from before session pages had addresses of their own', () => {
  it('posts its multipart form to the address without a handle, and the form is taken on its page', async () => {
    const tx = await newTransaction();
    const { context, page, problems } = await newContext({ viewport: PHONE });
    // Without the page's scripts: the plain form, signed by ticking a box.
    await context.route(/\.m?js$/, (route) => route.abort());
    await page.goto(`${h.url}/services/enter/${await participantToken(tx)}`);
    const pageUrl = page.url();
    await fillEveryControl(page);
    await page.locator('[data-signature="employee"]').getByLabel('Sign as Ada Claimant').check();
    // Such a page's form posted to the session root; as multipart, as a page with an upload does.
    await page.evaluate(() => {
      const form = document.getElementById('session-form');
      form.setAttribute('action', '/services/session');
      form.setAttribute('enctype', 'multipart/form-data');
    });
    const posts: string[] = [];
    page.on('response', (r) => {
      const request = r.request();
      if (request.method() === 'POST')
        posts.push(
          `${r.status()} ${new URL(r.url()).pathname} ${request.headers()['content-type']?.split(';')[0]}`,
        );
    });
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'GET' && r.url() === pageUrl),
      page.getByRole('button', { name: 'Submit the claim' }).click(),
    ]);
    await page.waitForLoadState('load');
    // Chromium posted the same form again where the 307 sent it.
    expect(posts).toEqual([
      '307 /services/session multipart/form-data',
      `303 ${new URL(pageUrl).pathname} multipart/form-data`,
    ]);
    expect(page.url()).toBe(pageUrl);
    expect(await page.locator('#outcome').textContent()).toContain(
      'Claim of Ada Lovelace received with 1 signature(s).',
    );
    expect((await received(tx))?.values).toEqual(EXPECTED_VALUES);
    expect(problems.filter((p) => !/\.m?js/.test(p))).toEqual([]);
    await context.close();
  });
});

describe('a person without the role', () => {
  it('sees the values read-only, no pads and no buttons', async () => {
    const tx = await newTransaction();
    const token = await h.a.json.transactions.createAnonymousToken({
      transactionId: tx,
      userSSO: sso,
      action: 'look',
    });
    const { context, page, problems } = await newContext({ viewport: DESKTOP });
    expect((await page.goto(`${h.url}/services/enter/${token}`))?.status()).toBe(200);
    await page.waitForSelector('main[data-pages-drawn="true"]');
    expect(await page.locator('#your-role').textContent()).toBe('Guest');
    expect(await page.locator('input:not([type="hidden"]), textarea, select').count()).toBe(0);
    expect(await page.locator('canvas.pad-canvas').count()).toBe(0);
    expect(await page.getByRole('button').count()).toBe(0);
    expect(await page.locator('.readonly').count()).toBe(8);
    expect(await page.locator('.no-actions').textContent()).toBe(
      'There is nothing for you to do here now.',
    );
    await shot(page, 'readonly');
    await expectAccessible(page, 'read-only');
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('the other pages a person may meet', () => {
  it('the used link, the ended session and a refused form pass axe-core too', async () => {
    const { context, page } = await newContext({ viewport: PHONE });
    const token = await participantToken(await newTransaction());
    await page.goto(`${h.url}/services/enter/${token}`);
    const used = await page.goto(`${h.url}/services/enter/${token}`);
    expect(used?.status()).toBe(410);
    await expectAccessible(page, 'the 410 page');
    await context.clearCookies();
    const ended = await page.goto(`${h.url}/services/session`);
    expect(ended?.status()).toBe(401);
    await expectAccessible(page, 'the 401 page');
    await shot(page, 'ended');
    await context.close();
  });
});

describe('a refused form and an ended session, as Chromium meets them', () => {
  it('a form without the page’s CSRF token: a 403 page whose way on is a link, never a re-post', async () => {
    const { context, page } = await newContext({ viewport: PHONE, hasTouch: true });
    await page.goto(`${h.url}/services/enter/${await participantToken(await newTransaction())}`);
    const address = page.url();
    await page.locator('input[name="csrf"]').evaluate((el) => {
      (el as HTMLInputElement).value = 'not-the-token';
    });
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Submit the claim' }).tap(),
    ]);
    expect(refused.status()).toBe(403);
    await page.waitForLoadState('load');
    const text = (await page.locator('main').textContent())!;
    expect(text).toContain('nothing in it was kept, and nothing was done');
    // "Reload the page" re-posted the refused form: the way on is a link to the page.
    expect(text).not.toMatch(/reload/i);
    const [opened] = await Promise.all([
      page.waitForResponse((r) => r.url() === address),
      page.getByRole('link', { name: 'Open the page again' }).tap(),
    ]);
    expect([opened.request().method(), opened.status()]).toEqual(['GET', 200]);
    await page.getByRole('button', { name: 'Submit the claim' }).waitFor();
    await context.close();
  });

  it('an ended session: one 401 page for the page and for its form, with one way on', async () => {
    const { context, page } = await newContext({ viewport: PHONE, hasTouch: true });
    await page.goto(`${h.url}/services/enter/${await participantToken(await newTransaction())}`);
    const address = page.url();
    await page.getByLabel('Employee name').fill('Ada Lovelace');
    // The session ends while the form is open (its cookie goes with an idle end).
    await context.clearCookies();
    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Submit the claim' }).tap(),
    ]);
    expect(posted.status()).toBe(401);
    await page.waitForLoadState('load');
    const afterPost = await page.locator('main').innerHTML();
    expect(await page.title()).toBe('Your session has ended');
    expect(afterPost).toContain('nothing in it was kept');
    await expectAccessible(page, 'the 401 page after a form');
    const got = await page.goto(address);
    expect(got?.status()).toBe(401);
    expect(await page.locator('main').innerHTML()).toBe(afterPost);
    const ended = await page.goto(`${h.url}/services/session`);
    expect(ended?.status()).toBe(401);
    expect(await page.locator('main').innerHTML()).toBe(afterPost);
    await context.close();
  });
});

describe('the assets and the document file', () => {
  it('serves the listed assets with long caching, and a document only to its session', async () => {
    const tx = await newTransaction();
    const { context, page } = await newContext({ viewport: DESKTOP });
    await page.goto(`${h.url}/services/enter/${await participantToken(tx)}`);
    const html = await page.content();
    const script = /src="([^"]+session-page\.js)"/.exec(html)![1]!;
    const asset = await page.request.get(h.url + script);
    expect(asset.status()).toBe(200);
    expect(asset.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers()['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await page.request.get(`${h.url}/services/assets/../package.json`)).status()).toBe(404);
    expect((await page.request.get(`${h.url}/services/assets/pdfjs-0/pdf.min.mjs`)).status()).toBe(
      404,
    );

    const documents = `${page.url()}/documents`;
    const doc = await page.request.get(`${documents}/0`);
    expect(doc.status()).toBe(200);
    expect(doc.headers()['content-type']).toBe('application/pdf');
    expect((await doc.body()).subarray(0, 5).toString()).toBe('%PDF-');
    expect((await page.request.get(`${documents}/1`)).status()).toBe(404);
    expect((await page.request.get(`${documents}/x`)).status()).toBe(404);
    // Without the session's cookie: no document.
    const stranger = await fetch(`${documents}/0`);
    expect(stranger.status).toBe(401);
    await context.close();
  });
});
