// The demo pal expense-approval in real Chromium, end to end over HTTP with the real SMTP listener
// (README "In a browser", docs/web-mode.md): the employee enters with the pal's P3 link, fills in
// the claim through its controls, signs with the mouse and submits; the manager opens the mailed
// link in a fresh browser, confirms, signs with a finger and approves; the completed claim, written
// by the outbox after the commit, is downloaded through Chromium and read with poppler: the values,
// both signers and the evidence page's times in its text, and ink in both signature boxes where
// the blank form has none. axe-core finds no serious or critical violation on the mailed link's
// confirm page and on the completed transaction's page. A claim the manager returns comes back to
// the employee unsigned: they change it, are told to sign, tick "Sign as" and submit it again.
import { AxeBuilder } from '@axe-core/playwright';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PEOPLE, ensureDemoPeople } from '../src/domain/demo.js';
import { deployPal } from '../src/domain/pals.js';
import {
  inkedPixels,
  launchChromium,
  pdfPagesDrawn,
  SCREENSHOTS,
  signPad,
  watchedPage,
} from './browser.js';
import { inkPng } from './documents.js';
import { tempDir } from './helpers.js';
import { PUBLIC_URL, startHarness, type Harness } from './harness.js';

// The functions passed to page.evaluate run in Chromium; the test project has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const window: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

const PAL = fileURLToPath(new URL('../../../examples/pals/expense-approval', import.meta.url));
const BLANK_CLAIM = join(PAL, 'documents', 'claim-form.pdf');
const { employee, manager } = DEMO_PEOPLE;
/** A desktop with a mouse, and a tablet in landscape used with a finger. */
const DEVICES = {
  desktop: { viewport: { width: 1280, height: 900 }, hasTouch: false },
  tablet: { viewport: { width: 1024, height: 768 }, hasTouch: true },
  phone: {
    viewport: { width: 360, height: 640 },
    deviceScaleFactor: 2,
    hasTouch: true,
    isMobile: true,
  },
} as const;
/** The photo of the receipts the employee chooses, as a phone's file picker gives it. */
const RECEIPTS = { name: 'receipts.png', mimeType: 'image/png', buffer: inkPng(60, 40) };
/** Poppler draws the pages at this resolution for the ink checks. */
const RENDER_DPI = 50;

let h: Harness;
let browser: Browser;
let closeBrowser: () => Promise<void>;
const work = tempDir('expense-web-');

beforeAll(async () => {
  h = await startHarness({ smtp: true });
  ({ browser, close: closeBrowser } = await launchChromium());
  await deployPal(h.domain, h.b.enterpriseId, resolve(PAL));
  await ensureDemoPeople(h.domain, h.b.enterpriseId);
});
afterAll(async () => {
  await closeBrowser?.();
  await h?.close();
  work.remove();
});

/** A fresh cookie jar on one of DEVICES, whose page records errors and failed requests. */
const freshContext = (device: keyof typeof DEVICES = 'desktop') =>
  watchedPage(browser, DEVICES[device]);

async function screenshot(page: Page, step: string): Promise<void> {
  // A page with documents is shown as a person sees it once pdf.js has drawn them (the earlier
  // screenshots of pages after a post showed the fields on white), and drawing must not fail.
  expect(await pdfPagesDrawn(page)).toMatch(/^(true|none)$/);
  await page.screenshot({ path: join(SCREENSHOTS, `expense-web-${step}.png`), fullPage: true });
}

/** Serious and critical axe-core findings (none expected). */
async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Records the pointerType of each pointerdown on the page, for pointerTypes() to read. */
async function watchPointers(page: Page): Promise<void> {
  await page.evaluate(() => {
    window.pointerTypesSeen = [];
    document.addEventListener(
      'pointerdown',
      (e: { pointerType: string }) => window.pointerTypesSeen.push(e.pointerType),
      true,
    );
  });
}
const pointerTypes = (page: Page): Promise<string[]> =>
  page.evaluate(() => window.pointerTypesSeen as string[]);

/**
 * The read-only fields on the drawn pages, and the boxes that show their values on the page's
 * picture, whose shown value is wider or taller than its box.
 */
async function overflowingValues(page: Page): Promise<string[]> {
  return page
    .locator('.placed .readonly, .placed .field-marker.shows-value:visible')
    .evaluateAll((fields) =>
      fields
        .filter((f) => f.scrollWidth > f.clientWidth + 1 || f.scrollHeight > f.clientHeight + 1)
        .map(
          (f) =>
            `${f.textContent} (${f.scrollWidth}x${f.scrollHeight} in ${f.clientWidth}x${f.clientHeight})`,
        ),
    );
}

/** Presses a button of the session form and waits for the page it redirects back to. */
async function press(page: Page, button: string): Promise<void> {
  await Promise.all([
    page.waitForURL(`${h.url}/services/session/*`, { waitUntil: 'load' }),
    page.getByRole('button', { name: button }).click(),
  ]);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Page 1 of a PDF as poppler draws it at 50 dpi, as a PNG file. */
function renderFirstPage(pdf: string, name: string): string {
  const prefix = join(work.path, name);
  execFileSync('pdftoppm', [
    '-png',
    '-r',
    String(RENDER_DPI),
    '-f',
    '1',
    '-l',
    '1',
    '-singlefile',
    pdf,
    prefix,
  ]);
  return `${prefix}.png`;
}

/** Inked pixels of a rendered page inside a box given in PDF points from its top left. */
async function inkInBox(
  png: string,
  box: { x: number; y: number; width: number; height: number },
): Promise<number> {
  const scale = RENDER_DPI / 72;
  // One pixel inside the box's edges: its printed frame is not ink.
  const inside = {
    x: Math.ceil(box.x * scale) + 1,
    y: Math.ceil(box.y * scale) + 1,
    width: Math.floor(box.width * scale) - 2,
    height: Math.floor(box.height * scale) - 2,
  };
  return (await inkedPixels(browser, readFileSync(png).toString('base64'), inside)).ink;
}

const CLAIM = {
  employeeName: 'Erika Employee',
  claimDate: '2026-11-20',
  costCentre: 'CC-4711',
  amount: '184.60',
  description: 'Train Zurich to Geneva and back, customer workshop',
};
const MANAGER_NOTE = 'Approved in the browser, thank you.';
// The signature boxes of pal.json, in points from the top left of page 1.
const EMPLOYEE_BOX = { x: 48, y: 632, width: 230, height: 70 };
const MANAGER_BOX = { x: 317, y: 632, width: 230, height: 70 };

/** Whole seconds, as the evidence page records a signature's time. */
/** The mailed link's path and query, from a mail's text (its host is PUBLIC_URL's). */
function mailLink(text: string): string {
  return new RegExp(`${PUBLIC_URL.replace(/[.:/]/g, '\\$&')}(/services/mail\\?\\S+)`).exec(
    text,
  )![1]!;
}

const second = (ms: number) => Math.floor(ms / 1000) * 1000;

describe('expense approval in Chromium', () => {
  it('the employee signs with the mouse, the mailed manager signs with a finger and approves, the completed PDF has both', async () => {
    // 1. The employee: the pal's entry link (P3) starts a new claim.
    const entry = await h.b.json.pals.createPalToken({
      palId: 'expense-approval',
      userSSO: employee.sso,
    });
    expect(entry.startsWith(`${PUBLIC_URL}/services/enter/`)).toBe(true);
    const erika = await freshContext();
    const page = erika.page;
    expect((await page.goto(entry.replace(PUBLIC_URL, h.url)))?.status()).toBe(200);
    expect(page.url()).toMatch(new RegExp(`^${h.url}/services/session/[\\w-]{12}$`));
    await page.waitForSelector('main[data-pages-drawn="true"]');
    await page.waitForSelector('main[data-pads-ready="true"]');
    // The manager's note and signature are not the employee's to give.
    expect(await page.locator('[name="managerNote"]').count()).toBe(0);
    expect(await page.locator('[data-signature="manager-signature"] canvas').count()).toBe(0);

    // The pal's `enter` filled in the name the service knows (input.person): nothing to type.
    expect(CLAIM.employeeName).toBe(`${employee.firstName} ${employee.lastName}`);
    expect(await page.getByLabel('Full name').inputValue()).toBe(CLAIM.employeeName);
    // A new claim is dated today.
    expect(await page.getByLabel('Date of the claim').inputValue()).toBe(
      new Date().toISOString().slice(0, 10),
    );

    await page.getByLabel('Date of the claim').fill(CLAIM.claimDate);
    await page.getByLabel('Cost centre').fill(CLAIM.costCentre);
    expect(await page.getByLabel('Category').inputValue()).toBe('Travel');
    await page.getByLabel('Category').selectOption('Meals');
    await page.getByLabel('Category').selectOption('Travel');
    await page.getByLabel('Amount').fill(CLAIM.amount);
    await page.getByLabel('What was bought, and why').fill(CLAIM.description);
    await page.getByLabel('The receipts are attached to this claim.').check();
    await page.getByLabel('Receipts: a PDF, or a photo of them').setInputFiles(RECEIPTS);
    await watchPointers(page);
    await signPad(page, 'employee-signature', 'mouse');
    expect(await pointerTypes(page)).toEqual(['mouse']);
    expect(await page.locator('[data-marker="employee-signature"] img').count()).toBe(1);
    // Submitted with a wrong amount and no description: both said at once, each under its
    // field and tied to it for a screen reader, the messages linking to them.
    await page.getByLabel('Amount').fill('lots');
    await page.getByLabel('What was bought, and why').fill('');
    await press(page, 'Submit the claim');
    await page.waitForSelector('main[data-pads-ready="true"]');
    const amount = page.getByLabel('Amount');
    expect(await amount.getAttribute('aria-invalid')).toBe('true');
    expect(await amount.getAttribute('aria-describedby')).toBe('error-amount');
    expect(await page.locator('#error-amount').textContent()).toBe(
      'write the sum in CHF, such as 120.50',
    );
    expect(await page.getByLabel('What was bought, and why').getAttribute('aria-invalid')).toBe(
      'true',
    );
    expect(await page.locator('#outcome a').allTextContents()).toEqual([
      'Amount (CHF)',
      'What was bought, and why',
    ]);
    expect(await amount.inputValue()).toBe('lots');
    // The message's link puts the focus in the amount's control, its label in sight.
    await page.locator('#outcome a', { hasText: 'Amount (CHF)' }).click();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('amount');
    const label = (await page.locator('label', { hasText: 'Amount (CHF)' }).boundingBox())!;
    const height = page.viewportSize()!.height;
    expect(label.y).toBeGreaterThanOrEqual(0);
    expect(label.y + label.height).toBeLessThanOrEqual(height);
    // The chosen photo is kept by the service (the browser forgot it), and the page says so.
    expect(await page.locator('.upload-draft').textContent()).toContain(
      'Kept from your last try: receipts.png',
    );
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, '1-employee-refused');
    // The drawing came back with the form; the person puts the two right.
    expect(await page.locator('[data-marker="employee-signature"] img').count()).toBe(1);
    await amount.fill(CLAIM.amount);
    await page.getByLabel('What was bought, and why').fill(CLAIM.description);

    // At a desktop the page is drawn at its size: no link to read it in full.
    expect(await page.getByRole('link', { name: 'Read page 1 full size' }).isVisible()).toBe(false);
    await screenshot(page, '1-employee-filled');

    const mailsBefore = h.mails.length;
    const beforeSubmit = second(Date.now());
    await press(page, 'Submit the claim');
    const afterSubmit = Date.now();
    expect(await page.locator('#outcome').textContent()).toContain(
      `Submitted CHF ${CLAIM.amount} for approval`,
    );
    expect(await page.locator('#status').textContent()).toBe('Submitted');
    expect(await page.getByRole('button', { name: 'Submit the claim' }).count()).toBe(0);
    expect(await page.locator('.upload-given').textContent()).toContain('receipts.png');
    // Nothing is the employee's to change now: the claim is shown, not a form to fill in.
    expect(
      await page.locator('#session-form input:not([type="hidden"]), textarea, select').count(),
    ).toBe(0);
    expect(await page.locator('.signature canvas').count()).toBe(0);
    expect(await page.locator('.readonly').filter({ hasText: CLAIM.amount }).count()).toBe(1);
    await screenshot(page, '2-employee-submitted');
    const transactionId = (
      await h.b.json.transactions.searchTransactions({ sso: employee.sso })
    )[0]!.id!;

    // 2. The manager's mail, at the SMTP listener.
    const mail = await until('the manager’s mail', async () =>
      h.mails.length > mailsBefore ? h.mails.at(-1) : undefined,
    );
    expect(mail.envelope.to).toEqual([manager.email]);
    expect(mail.mail.subject).toBe(`Expense claim of CHF ${CLAIM.amount} to approve`);
    const link = mailLink(mail.mail.text!);

    // In a browser of its own, on a tablet: nothing of the employee's session.
    const morgan = await freshContext('tablet');
    const managerPage = morgan.page;
    expect((await managerPage.goto(h.url + link))?.status()).toBe(200);
    expect(await managerPage.locator('#confirm').textContent()).toBe('Open Expense approval');
    // The confirm page says what waits, in the claim page's words, and whose link it is.
    expect(await managerPage.locator('#status').textContent()).toBe('Status: Submitted');
    expect(await managerPage.locator('main, body').first().textContent()).toContain(
      `opens this for you, ${manager.firstName} ${manager.lastName}, in this browser`,
    );
    await screenshot(managerPage, '3-manager-confirm');
    expect(await seriousViolations(managerPage), 'the confirm page').toEqual([]);
    await Promise.all([
      managerPage.waitForURL(`${h.url}/services/session/*`, { waitUntil: 'load' }),
      managerPage.locator('#confirm').click(),
    ]);
    expect(await managerPage.locator('#outcome').textContent()).toContain(
      'approve and sign, or return it',
    );
    expect(await managerPage.locator('#your-role').textContent()).toBe('Manager');
    await managerPage.waitForSelector('main[data-pads-ready="true"]');
    // The employee's claim is shown to the manager as values, not as controls.
    expect(await managerPage.locator('[name="employeeName"]').count()).toBe(0);
    expect(await managerPage.locator('.readonly').allTextContents()).toEqual(
      expect.arrayContaining([
        expect.stringContaining(CLAIM.employeeName),
        expect.stringContaining(CLAIM.costCentre),
      ]),
    );
    // For a finger the fields are listed under the page, a ticked box saying so in words, and
    // the manager's one control is large enough to hit.
    expect(
      await managerPage
        .locator('.readonly')
        .filter({ hasText: 'The receipts are attached to this claim.' })
        .textContent(),
    ).toContain('Yes');
    const note = managerPage.getByLabel('Manager’s note');
    expect((await note.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    await note.fill(MANAGER_NOTE);
    // Approving needs the manager's signature, as its box says: pressed unsigned, the page asks
    // for it, keeps the note, and its message leads to the signature.
    expect(
      await managerPage.locator('[data-signature="manager-signature"] legend').textContent(),
    ).toBe('Your signature (required for “Approve and sign”)');
    // The receipts Erika gave open from the page, in a tab of their own (the form stays).
    const [receipts] = await Promise.all([
      managerPage.waitForEvent('popup'),
      managerPage.getByRole('link', { name: RECEIPTS.name }).tap(),
    ]);
    await receipts.waitForLoadState();
    expect(receipts.url()).toMatch(/\/services\/session\/[^/]+\/uploads\/receipts$/);
    // Its bytes, asked for with that browser's cookies.
    const shown = await managerPage.context().request.get(receipts.url());
    expect(shown.status()).toBe(200);
    expect((await shown.body()).equals(RECEIPTS.buffer)).toBe(true);
    await receipts.close();
    expect(await note.inputValue()).toBe(MANAGER_NOTE);
    await press(managerPage, 'Approve and sign');
    await managerPage.waitForSelector('main[data-pads-ready="true"]');
    expect(await managerPage.locator('#outcome h2').textContent()).toBe(
      '“Approve and sign” needs more from you',
    );
    expect(await note.inputValue()).toBe(MANAGER_NOTE);
    await managerPage
      .locator('#outcome a', { hasText: 'your signature is needed for “Approve and sign”' })
      .tap();
    expect(
      await managerPage.evaluate(
        () => document.activeElement?.closest('[data-signature]')?.dataset.signature,
      ),
    ).toBe('manager-signature');
    await watchPointers(managerPage);
    await signPad(managerPage, 'manager-signature', 'touch');
    expect(await pointerTypes(managerPage)).toEqual(['touch']);
    expect(await managerPage.locator('[data-marker="manager-signature"] img').count()).toBe(1);
    await screenshot(managerPage, '4-manager-signed');

    const beforeApprove = second(Date.now());
    await press(managerPage, 'Approve and sign');
    const afterApprove = Date.now();
    expect(await managerPage.locator('#outcome').textContent()).toContain(
      `Approved CHF ${CLAIM.amount}`,
    );
    expect(await managerPage.locator('#status').textContent()).toBe(
      'Approved (completed: the work on it is done)',
    );
    expect(await managerPage.getByRole('button', { name: 'Approve and sign' }).count()).toBe(0);
    await screenshot(managerPage, '5-manager-approved');

    // 3. The completed claim: written by the outbox after the commit; the page offers it then.
    // The page's script shows it once it is written: nobody reloads the page.
    const download = managerPage.locator('a.completed-download');
    await download.waitFor({ timeout: 20_000 });
    expect(await download.textContent()).toBe('Download the completed document (PDF)');
    // "Open" shows the completed claim now, not the blank form.
    const open = managerPage.getByRole('link', { name: 'Open the completed claim-form.pdf' });
    expect(await open.getAttribute('href')).toBe(`${await download.getAttribute('href')}?view`);
    await managerPage.waitForSelector('main[data-pages-drawn="true"]');
    await screenshot(managerPage, '6-completed');
    expect(await seriousViolations(managerPage), 'the completed transaction').toEqual([]);
    const [file] = await Promise.all([managerPage.waitForEvent('download'), download.click()]);
    expect(file.suggestedFilename()).toBe('claim-form-completed.pdf');
    const completedPdf = join(work.path, 'completed.pdf');
    await file.saveAs(completedPdf);
    expect(readFileSync(completedPdf).subarray(0, 5).toString()).toBe('%PDF-');

    const text = execFileSync('pdftotext', [completedPdf, '-'])
      .toString('utf8')
      .replace(/\s+/g, ' ');
    for (const expected of [
      ...Object.values(CLAIM),
      MANAGER_NOTE,
      'Evidence of signatures',
      `Transaction: ${transactionId}`,
      `Signer: ${employee.firstName} ${employee.lastName}`,
      `E-mail: ${employee.email}`,
      `Signer: ${manager.firstName} ${manager.lastName}`,
      `E-mail: ${manager.email}`,
      'Signature "employee-signature" (role owner)',
      'Signature "manager-signature" (role manager)',
    ])
      expect(text).toContain(expected);
    // The times on the evidence page: each signature while its button was pressed, the employee's
    // first; the completion with the manager's.
    const signedAt = [...text.matchAll(/Signed at \(UTC\): (\S+)/g)].map((m) => Date.parse(m[1]!));
    expect(signedAt).toHaveLength(2);
    expect(signedAt[0]).toBeGreaterThanOrEqual(beforeSubmit);
    expect(signedAt[0]).toBeLessThanOrEqual(afterSubmit);
    expect(signedAt[1]).toBeGreaterThanOrEqual(beforeApprove);
    expect(signedAt[1]).toBeLessThanOrEqual(afterApprove);
    const completedAt = Date.parse(/Completed: (\S+)/.exec(text)![1]!);
    expect(completedAt).toBeGreaterThanOrEqual(beforeApprove);
    expect(completedAt).toBeLessThanOrEqual(afterApprove);
    expect(text).toContain('How: drawn');

    // Both signatures drawn in their boxes: ink where the blank deployed form, drawn the same
    // way, has next to none.
    const blank = renderFirstPage(BLANK_CLAIM, 'blank');
    const completed = renderFirstPage(completedPdf, 'completed');
    for (const [who, box] of [
      ['employee', EMPLOYEE_BOX],
      ['manager', MANAGER_BOX],
    ] as const) {
      const before = await inkInBox(blank, box);
      const after = await inkInBox(completed, box);
      expect(after - before, `${who}: ink in the signature box`).toBeGreaterThan(150);
    }
    writeFileSync(join(SCREENSHOTS, 'expense-web-7-completed-page1.png'), readFileSync(completed));

    expect(erika.problems).toEqual([]);
    expect(morgan.problems).toEqual([]);
    await erika.context.close();
    await morgan.context.close();
  });

  it('a returned claim is signed anew: the mailed employee changes it, must sign again, and submits', async () => {
    const mailTo = (address: string, after: number) =>
      until(`the mail to ${address}`, async () =>
        h.mails.slice(after).find((m) => m.envelope.to.includes(address)),
      );
    const openMailed = async (page: Page, link: string) => {
      expect((await page.goto(h.url + link))?.status()).toBe(200);
      await Promise.all([
        page.waitForURL(`${h.url}/services/session/*`, { waitUntil: 'load' }),
        page.locator('#confirm').click(),
      ]);
      await page.waitForSelector('main[data-pads-ready="true"]');
    };

    // The employee submits, signing with the "Sign as" box (no drawing).
    const entry = await h.b.json.pals.createPalToken({
      palId: 'expense-approval',
      userSSO: employee.sso,
    });
    const erika = await freshContext();
    await erika.page.goto(entry.replace(PUBLIC_URL, h.url));
    await erika.page.waitForSelector('main[data-pads-ready="true"]');
    await erika.page.getByLabel('Date of the claim').fill(CLAIM.claimDate);
    await erika.page.getByLabel('Cost centre').fill(CLAIM.costCentre);
    await erika.page.getByLabel('Amount').fill('99.00');
    await erika.page.getByLabel('What was bought, and why').fill('Taxi to the airport');
    await erika.page.getByLabel('The receipts are attached to this claim.').check();
    await erika.page.getByLabel('Receipts: a PDF, or a photo of them').setInputFiles(RECEIPTS);
    const signAs = erika.page.getByLabel(`Sign as ${CLAIM.employeeName}`);
    await signAs.check();
    let mails = h.mails.length;
    await press(erika.page, 'Submit the claim');
    expect(await erika.page.locator('#status').textContent()).toBe('Submitted');

    // The manager returns it with a note, at a desktop this time: the controls sit in their boxes
    // on the page, and each read-only value fits the box it sits in (a ticked box shows a tick).
    const morgan = await freshContext();
    await openMailed(morgan.page, mailLink((await mailTo(manager.email, mails)).mail.text!));
    await morgan.page.waitForSelector('main[data-pages-drawn="true"]');
    expect(await morgan.page.locator('.placed .readonly').count()).toBeGreaterThan(3);
    expect(await overflowingValues(morgan.page)).toEqual([]);
    expect(
      await morgan.page
        .locator('.placed .readonly')
        .filter({ hasText: 'The receipts are attached to this claim.' })
        .evaluate((f) => window.getComputedStyle(f, '::after').content as string),
    ).toContain('✓');
    // With the address of the rules, a word longer than the window is wide.
    const rules = `https://intranet.example/finance/rules?ref=${'A7f3Q9'.repeat(40)}`;
    await morgan.page.getByLabel('Manager’s note').fill(`The receipt says 89.00. See ${rules}.`);
    mails = h.mails.length;
    await press(morgan.page, 'Return to the employee');
    expect(await morgan.page.locator('#status').textContent()).toBe('Returned');

    // The employee's mailed link: the claim is theirs to change again, and unsigned.
    await openMailed(erika.page, mailLink((await mailTo(employee.email, mails)).mail.text!));
    expect(await erika.page.locator('#outcome').textContent()).toContain('The receipt says 89.00.');
    // The message quotes the note, its long address broken at the window's edge, not the page.
    expect(await erika.page.locator('#outcome').textContent()).toContain(rules);
    expect(
      await erika.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    ).toBe(true);
    expect(await erika.page.locator('[data-marker="employee-signature"] img').count()).toBe(0);
    expect(await signAs.isChecked()).toBe(false);
    await erika.page.getByLabel('Amount').fill('89.00');
    await press(erika.page, 'Submit the claim');
    expect(await erika.page.locator('#outcome').textContent()).toContain('Sign before you go on');
    expect(await erika.page.locator('#status').textContent()).toBe('Returned');
    // What was typed is kept for the second try.
    expect(await erika.page.getByLabel('Amount').inputValue()).toBe('89.00');
    await signAs.check();
    const resigned = second(Date.now());
    await press(erika.page, 'Submit the claim');
    expect(await erika.page.locator('#outcome').textContent()).toContain('Submitted CHF 89.00');
    expect(await erika.page.locator('#status').textContent()).toBe('Submitted');
    const transactionId = (
      await h.b.json.transactions.searchTransactions({ sso: employee.sso })
    ).find((t) => t.status === 'SUBMITTED')!.id!;
    const [kept] = await h.domain.db
      .selectFrom('transaction_signatures')
      .select(['kind', 'record_time'])
      .where('transaction_id', '=', transactionId)
      .execute();
    expect(kept!.kind).toBe('TYPED');
    expect(Number(kept!.record_time) * 1000).toBeGreaterThanOrEqual(resigned);
    expect(erika.problems).toEqual([]);
    expect(morgan.problems).toEqual([]);
    await erika.context.close();
    await morgan.context.close();
  });

  it('on a phone: a box refused says so on a line of its own, and the submitted claim reads as text', async () => {
    const entry = await h.b.json.pals.createPalToken({
      palId: 'expense-approval',
      userSSO: employee.sso,
    });
    const erika = await freshContext('phone');
    const page = erika.page;
    await page.goto(entry.replace(PUBLIC_URL, h.url));
    await page.waitForSelector('main[data-pads-ready="true"]');
    // The phone's keyboard fits each field: digits and a decimal mark for the amount, the date
    // picker for the date, the name the browser knows for the name (pal.json's `input`).
    expect(await page.getByLabel('Amount').getAttribute('inputmode')).toBe('decimal');
    expect(await page.getByLabel('Date of the claim').getAttribute('type')).toBe('date');
    expect(await page.getByLabel('Full name').getAttribute('autocomplete')).toBe('name');
    await page.getByLabel('Amount').fill('12.40');
    await page.getByLabel('What was bought, and why').fill('Parking at the customer');
    const box = page.getByLabel('The receipts are attached to this claim.');
    await box.check();
    await page.getByLabel(`Sign as ${CLAIM.employeeName}`).check();
    // Ticked, but no file chosen: the workflow refuses the box.
    await press(page, 'Submit the claim');
    const error = page.locator('#error-receiptsAttached');
    expect(await error.textContent()).toBe('upload the receipts below, or untick this box');
    // Its words are a line across the field, above the box: not a column squeezed beside it.
    const errorBox = (await error.boundingBox())!;
    const checkbox = (await box.boundingBox())!;
    const field = (await page.locator('.field-checkbox.invalid').boundingBox())!;
    expect(errorBox.width).toBeGreaterThan(field.width * 0.9);
    expect(errorBox.y + errorBox.height).toBeLessThanOrEqual(checkbox.y);
    // The tab and a screen reader's first words say the form did not go through; the message's
    // link to the box is a finger's target.
    expect(await page.title()).toBe('Not done: Expense approval');
    const link = (await page.locator('#outcome a').boundingBox())!;
    expect(link.height).toBeGreaterThanOrEqual(44);
    await screenshot(page, 'phone-1-box-refused');

    // The receipts come later: the box unticked, the claim goes.
    await box.uncheck();
    await press(page, 'Submit the claim');
    expect(await page.locator('#status').textContent()).toBe('Submitted');
    // A success is said first too, and the focus is on what it came to.
    expect(await page.title()).toBe('Done: Expense approval');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('outcome');
    // The read-only box reads "…claim. No", its "No" on one line, not one letter a line.
    const yes = page
      .locator('.readonly')
      .filter({ hasText: 'The receipts are attached to this claim.' })
      .locator('.field-value');
    expect(await yes.textContent()).toBe('No');
    const fontSize = await yes.evaluate((el) => parseFloat(window.getComputedStyle(el).fontSize));
    const value = (await yes.boundingBox())!;
    expect(value.height).toBeLessThan(fontSize * 2);
    // …and read on with its label, on the label's last line, not put under it.
    const label = (await yes
      .locator('xpath=preceding-sibling::span[@class="field-label"]')
      .boundingBox())!;
    expect(value.y).toBeLessThan(label.y + label.height);
    // The drawn page shows the submitted values in their boxes, not empty boxes to fill in, and
    // the typed signature within its box.
    await page.waitForSelector('main[data-pages-drawn="true"]');
    const markers = page.locator('.field-marker');
    expect(await markers.count()).toBeGreaterThan(0);
    expect(await page.locator('.field-marker:not(.shows-value)').count()).toBe(0);
    expect(await overflowingValues(page)).toEqual([]);
    expect(await markers.allTextContents()).toContain('Parking at the customer');
    // The page's picture is too small to read on a phone: the page in full is a tap away.
    const full = page.getByRole('link', { name: 'Read page 1 full size' });
    expect(await full.isVisible()).toBe(true);
    expect(await full.getAttribute('href')).toMatch(/\/documents\/0#page=1$/);
    const signed = page.locator('[data-marker="employee-signature"] .typed-preview');
    const fits = await signed.evaluate((el) => {
      const text = el.getBoundingClientRect();
      const marker = el.parentElement.getBoundingClientRect();
      return el.scrollWidth <= el.clientWidth && text.height <= marker.height;
    });
    expect(fits).toBe(true);
    await screenshot(page, 'phone-2-submitted');
    expect(await seriousViolations(page)).toEqual([]);
    expect(erika.problems).toEqual([]);
    await erika.context.close();
  });
});
