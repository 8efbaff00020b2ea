// `npm run docs:images`: the screenshots in docs/images, copied from what the Chromium tests took
// of the pages this run (test-output/screenshots), so the docs show the pages as they are. The
// tests run first (the script in package.json); a screenshot they did not take stops the copy.
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { SCREENSHOTS } from './browser.js';

const DOCS_IMAGES = join(import.meta.dirname, '..', '..', '..', 'docs', 'images');

/** docs/images name ← the test's screenshot. */
const IMAGES: Record<string, string> = {
  'web-desktop-filled.png': 'session-desktop-filled.png',
  'web-desktop-submitted.png': 'session-desktop-submitted.png',
  'web-nojs-filled.png': 'session-nojs-filled.png',
  'web-phone-filled.png': 'session-phone-filled.png',
  'session-action.png': 'session-action.png',
  'mail-link-confirm.png': 'mail-link-confirm.png',
  'invitation-confirm.png': 'invitation-confirm.png',
  'invitation-accepted.png': 'invitation-accepted.png',
};

const missing = Object.values(IMAGES).filter((shot) => !existsSync(join(SCREENSHOTS, shot)));
if (missing.length > 0) {
  console.error(`no screenshot ${missing.join(', ')} in ${SCREENSHOTS}: run the browser tests`);
  process.exit(1);
}
for (const [image, shot] of Object.entries(IMAGES)) {
  copyFileSync(join(SCREENSHOTS, shot), join(DOCS_IMAGES, image));
  console.log(`docs/images/${image} ← test-output/screenshots/${shot}`);
}
