// A file chosen on the session page, in real Chromium (docs/web-mode.md, "Uploads"): the page says
// what may be chosen and how large before the choice; a file over UPLOAD_MAX_MB is said beside its
// control as soon as it is chosen, and the form is not sent (a phone's photo would take minutes to
// be refused); without JavaScript the server says the same on the page it comes back to, with what
// was typed; a chosen file within the cap goes up in the browser's own multipart form and is kept;
// and a form that is still arriving when REQUEST_TIMEOUT_MS runs out gets a page that says so, not
// an errorResult.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { launchChromium, SCREENSHOTS } from './browser.js';
import { png } from './documents.js';
import { engine } from './engine.js';
import { startHarness, type Harness } from './harness.js';
import { tempDir } from './helpers.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const PHONE = { width: 360, height: 740 };
const MIB = 1024 * 1024;
/** Short, so that a form on a slow link runs out of it within the test. */
const REQUEST_TIMEOUT_MS = 3000;

let h: Harness;
let browser: Browser;
let closeBrowser: () => Promise<void>;
let sso: string;
const folder = tempDir('uploads-pal-');

// The page and its script do not depend on the engine: SQLite's run is enough.
describe.runIf(engine === 'sqlite')('uploads on the session page, in Chromium', () => {
  beforeAll(async () => {
    h = await startHarness({
      env: { UPLOAD_MAX_MB: '1', REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) },
    });
    ({ browser, close: closeBrowser } = await launchChromium());
    await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, 'wf-tx'));
    // wf-tx again, with both of its files the participant's to upload.
    const twoFiles = join(folder.path, 'wf-two-files');
    cpSync(join(FIXTURES, 'wf-tx'), twoFiles, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(twoFiles, 'pal.json'), 'utf8'));
    manifest.id = 'wf-two-files';
    for (const upload of manifest.uploads) upload.roles = 'participant';
    writeFileSync(join(twoFiles, 'pal.json'), JSON.stringify(manifest));
    await deployPal(h.domain, h.a.enterpriseId, twoFiles);
    sso = await createSso(h.domain, h.a.enterpriseId, {
      firstName: 'Uma',
      lastName: 'Upload',
      email: 'uma.upload@example.test',
    });
  }, 120_000);
  afterAll(async () => {
    await closeBrowser?.();
    await h?.close();
    folder.remove();
  });

  /** A new transaction of `palId` entered by its participant, on a phone. */
  async function enter(
    javaScriptEnabled = true,
    palId = 'wf-tx',
  ): Promise<{ tx: string; page: Page; posts: string[] }> {
    const tx = await h.a.json.transactions.createTransaction({ palId });
    const token = await h.a.json.transactions.createTransactionToken({
      transactionId: tx,
      userSSO: sso,
    });
    const context = await browser.newContext({
      viewport: PHONE,
      deviceScaleFactor: 2,
      hasTouch: true,
      isMobile: true,
      javaScriptEnabled,
    });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(request.url());
    });
    await page.goto(`${h.url}/services/enter/${token}`);
    if (javaScriptEnabled) await page.waitForSelector('main[data-pads-ready="true"]');
    return { tx, page, posts };
  }

  /** Taps the action's button and waits for the page the form's answer leads to. */
  async function send(page: Page): Promise<void> {
    const navigated = page.waitForEvent('framenavigated', (f) => f === page.mainFrame());
    await page.getByRole('button', { name: 'Keep the note' }).tap();
    await navigated;
    await page.waitForLoadState('load');
  }

  const uploadsOf = (tx: string) =>
    h.domain.db
      .selectFrom('transaction_uploads')
      .select(['name', 'filename', 'size'])
      .where('transaction_id', '=', tx)
      .execute();

  const photo = (bytes: number) => ({
    name: 'passport-photo.jpg',
    mimeType: 'image/jpeg',
    buffer: Buffer.alloc(bytes, 0x55),
  });

  it('says the cap before the choice, a file over it at once, and sends nothing until a smaller one is chosen', async () => {
    const { tx, page, posts } = await enter();
    const input = page.getByLabel('Identity document');
    await expect(
      page.locator(`#${await input.getAttribute('aria-describedby')}`).textContent(),
    ).resolves.toBe('PNG, JPEG or PDF, at most 1 MB.');

    await page.getByLabel('Text').fill('with a photo');
    await input.setInputFiles(photo(1.5 * MIB));
    const problem = page.getByRole('alert');
    await expect(problem.textContent()).resolves.toBe(
      'This file is 1.5 MB: the most is 1 MB. Choose a smaller one.',
    );
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    await page.screenshot({ path: join(SCREENSHOTS, 'upload-too-large.png'), fullPage: true });
    expect(
      (await new AxeBuilder({ page }).analyze()).violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => v.id),
    ).toEqual([]);

    // A tap on the button sends nothing: the file's control gets the focus, its problem in view.
    await page.getByRole('button', { name: 'Keep the note' }).tap();
    await page.waitForTimeout(500);
    expect(posts).toEqual([]);
    expect(await input.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await page.getByLabel('Text').inputValue()).toBe('with a photo');

    // A file within the cap mends it, goes up in the browser's own multipart form, and is kept.
    const small = png(40, 30);
    await input.setInputFiles({ name: 'passport.png', mimeType: 'image/png', buffer: small });
    await expect(problem.count()).resolves.toBe(0);
    expect(await input.getAttribute('aria-invalid')).toBeNull();
    await send(page);
    expect(posts).toHaveLength(1);
    await expect(page.locator('.upload-given').textContent()).resolves.toBe(
      'Uploaded: passport.png (1 KB)',
    );
    expect(await uploadsOf(tx)).toEqual([
      { name: 'identity', filename: 'passport.png', size: small.length },
    ]);
  }, 90_000);

  it('a form the script stops leaves the signature as it was: drawn, then sent with a smaller file', async () => {
    const { tx, page, posts } = await enter();
    const pad = page.locator('[data-signature="participant-sign"] canvas');
    await pad.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    const box = (await pad.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.1, box.y + box.height * 0.6);
    await page.mouse.down();
    for (let i = 1; i <= 20; i++)
      await page.mouse.move(box.x + box.width * (0.1 + 0.04 * i), box.y + box.height * 0.4);
    await page.mouse.up();

    const input = page.getByLabel('Identity document');
    await input.setInputFiles(photo(1.5 * MIB));
    await page.getByRole('button', { name: 'Keep the note' }).tap();
    await page.waitForTimeout(500);
    expect(posts).toEqual([]);
    // Before, the pad's own listener ran on the stopped form and disabled "Sign as", for good.
    const byName = page.locator('[data-signature="participant-sign"] .signature-typed');
    expect(await byName.isDisabled()).toBe(false);

    await input.setInputFiles({ name: 'id.png', mimeType: 'image/png', buffer: png(20, 20) });
    await send(page);
    expect(posts).toHaveLength(1);
    const [signed] = await h.domain.db
      .selectFrom('transaction_signatures')
      .select(['signature_id', 'kind'])
      .where('transaction_id', '=', tx)
      .execute();
    expect(signed).toEqual({ signature_id: 'participant-sign', kind: 'DRAWN' });
    expect((await uploadsOf(tx)).map((u) => u.filename)).toEqual(['id.png']);
  }, 90_000);

  it('several files: the cap holds for them together, counted as the server counts them', async () => {
    const { page } = await enter(true, 'wf-two-files');
    const first = page.getByLabel('Identity document');
    const second = page.getByLabel('Proof of address');
    const problemOf = async (id: string) => {
      const line = page.locator(`#${id}-problem`);
      return (await line.count()) === 0 ? '' : await line.textContent();
    };
    const ids = [await first.getAttribute('id'), await second.getAttribute('id')] as string[];
    await expect(page.locator(`#${ids[0]}-hint`).textContent()).resolves.toBe(
      'PNG, JPEG or PDF, at most 1 MB (all files of this page together).',
    );

    // Each within the cap, together past it: the second, which takes them past it, is refused.
    await first.setInputFiles(photo(0.6 * MIB));
    await second.setInputFiles({
      ...photo(0.6 * MIB),
      name: 'bill.pdf',
      mimeType: 'application/pdf',
    });
    expect(await problemOf(ids[0]!)).toBe('');
    expect(await problemOf(ids[1]!)).toBe(
      'With the files chosen above it, this makes 1.2 MB: the most for this page is 1 MB. Choose a smaller file.',
    );
    // The first over the cap alone is refused and not counted (as the server reads the form), so
    // the second fits. A byte over the cap never reads as the cap.
    await first.setInputFiles(photo(MIB + 1));
    expect(await problemOf(ids[0]!)).toBe(
      'This file is 1.1 MB: the most is 1 MB. Choose a smaller one.',
    );
    expect(await problemOf(ids[1]!)).toBe('');
    // Cleared, nothing is said.
    await first.setInputFiles([]);
    expect(await problemOf(ids[0]!)).toBe('');
    expect(await first.getAttribute('aria-invalid')).toBeNull();
  }, 90_000);

  it('without JavaScript, the server says the file is too large on the page, with what was typed', async () => {
    const { tx, page, posts } = await enter(false);
    // Beyond ASCII: the browser's multipart text comes back as typed (the server reads its bytes
    // as UTF-8 itself, session-form.ts).
    const typed = 'typed before the photo: Zürich, 東京 ✓';
    await page.getByLabel('Text').fill(typed);
    await page.getByLabel('Identity document').setInputFiles(photo(1.5 * MIB));
    await send(page);
    expect(posts).toHaveLength(1);
    await expect(page.locator('#outcome').textContent()).resolves.toContain(
      'The file for “Identity document” is larger than 1 MB',
    );
    expect(await page.getByLabel('Text').inputValue()).toBe(typed);
    expect(await uploadsOf(tx)).toEqual([]);
  }, 90_000);

  it('a form still arriving when the request time runs out is answered with a page', async () => {
    const { tx, page } = await enter();
    // 20 KB a second up: 900 KB (within the cap, so the script lets it go) takes 45 s.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 20_000,
    });
    await page.getByLabel('Identity document').setInputFiles(photo(900 * 1024));
    const started = Date.now();
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST', { timeout: 60_000 }),
      page.getByRole('button', { name: 'Keep the note' }).tap(),
    ]);
    expect(answer.status()).toBe(408);
    expect(Date.now() - started).toBeLessThan(30_000);
    await expect(page.locator('h1').textContent()).resolves.toBe(
      'This form took too long to arrive',
    );
    // The link leads back to the session page, which is still there to send the form again.
    await page.getByRole('link', { name: 'Back to the page' }).tap();
    await page.getByLabel('Identity document').waitFor();
    expect(await uploadsOf(tx)).toEqual([]);
  }, 90_000);
});
