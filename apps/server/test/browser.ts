// Real Chromium for the page tests: Debian's `chromium` driven by playwright-core through
// `executablePath` (never a downloaded browser), with the flags a closed network needs. Playwright
// gives every launch a fresh, empty profile of its own.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots of the pages, for people to look at (not compared). */
export const SCREENSHOTS = join(import.meta.dirname, '..', 'test-output', 'screenshots');

export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return { browser, close: () => browser.close() };
}

/** A browser context (a fresh cookie jar) and its page, with what went wrong on it. */
export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Script errors, uncaught exceptions and answers of status 400 or more, as they came. */
  problems: string[];
}

/** A fresh cookie jar whose page records script errors and failed requests in `problems`. */
export async function watchedPage(
  browser: Browser,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<WatchedPage> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`${m.text()} ${m.location().url}`);
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
  });
  return { context, page, problems };
}

/**
 * A zigzag across a session page's signature pad: with the mouse, or with a finger (CDP touch
 * events, which Chromium delivers to the page as pointer events of pointerType "touch").
 */
export async function signPad(
  page: Page,
  signatureId: string,
  by: 'mouse' | 'touch' = 'mouse',
): Promise<void> {
  const pad = page.locator(`[data-signature="${signatureId}"] canvas`);
  // Kept clear of the sticky bar of buttons at the bottom of the window.
  await pad.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  const box = (await pad.boundingBox())!;
  const points = Array.from({ length: 16 }, (_, i) => ({
    x: box.x + box.width * (0.12 + 0.05 * i),
    y: box.y + box.height * (i % 2 === 0 ? 0.3 : 0.7),
  }));
  const [first, ...rest] = points;
  if (by === 'mouse') {
    await page.mouse.move(first!.x, first!.y);
    await page.mouse.down();
    for (const p of rest) await page.mouse.move(p.x, p.y, { steps: 3 });
    await page.mouse.up();
    return;
  }
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [first!] });
  for (const p of rest)
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [p] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

/**
 * Waits until pdf.js has drawn a session page's PDF pages, in a browser with JavaScript on, and
 * answers how it ended: 'true' or 'failed'; 'none' when the page has no PDF pages. Screenshots
 * wait for it: taken before, they showed the fields on white. (A page whose script never ran
 * never says, and the wait times out.)
 */
export async function pdfPagesDrawn(page: Page): Promise<string> {
  if ((await page.locator('.page[data-kind="pdf"]').count()) === 0) return 'none';
  await page.waitForSelector('main[data-pages-drawn]');
  return (await page.locator('main').getAttribute('data-pages-drawn'))!;
}

// The functions passed to page.evaluate run in Chromium; the test project has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const Image: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

/** A part of an image, in its pixels. */
export interface PixelBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * How many pixels of a PNG (base64) are drawn on: not transparent and not near white. Decoded by
 * Chromium; within `box` when given, else the whole image.
 */
export async function inkedPixels(
  browser: Browser,
  base64: string,
  box?: PixelBox,
): Promise<{ width: number; height: number; ink: number }> {
  const page = await browser.newPage();
  try {
    return await page.evaluate(
      async ({ data, box }) => {
        const img = new Image();
        img.src = `data:image/png;base64,${data}`;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.naturalWidth;
        canvas.height = img.naturalHeight;
        const ctx = canvas.getContext('2d');
        ctx.drawImage(img, 0, 0);
        const area = box ?? { x: 0, y: 0, width: canvas.width, height: canvas.height };
        const pixels: number[] = ctx.getImageData(area.x, area.y, area.width, area.height).data;
        let ink = 0;
        for (let i = 0; i < pixels.length; i += 4)
          if (pixels[i + 3]! > 0 && pixels[i]! + pixels[i + 1]! + pixels[i + 2]! < 600) ink++;
        return { width: canvas.width, height: canvas.height, ink };
      },
      { data: base64, box },
    );
  } finally {
    await page.close();
  }
}
