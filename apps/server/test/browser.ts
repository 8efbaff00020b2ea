// Real Chromium for the page tests: Debian's `chromium` driven by playwright-core through
// `executablePath` (never a downloaded browser), with the flags a closed network needs. Playwright
// gives every launch a fresh, empty profile of its own.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

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
