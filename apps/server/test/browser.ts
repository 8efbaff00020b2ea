// Real Chromium for the page tests: Debian's `chromium` driven by playwright-core through
// `executablePath` (never a downloaded browser), with the flags a closed network needs. Playwright
// gives every launch a fresh, empty profile of its own.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

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
