// The pages a person sees, in real Chromium: the invitation link from a real mail, opened and
// accepted by clicking its button (the browser posts the form as every browser does:
// application/x-www-form-urlencoded with an empty body). And the same posts over plain HTTP.
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, SCREENSHOTS } from './browser.js';
import { PUBLIC_URL, startHarness, type Harness } from './harness.js';

let h: Harness;
let browser: Browser;
let closeBrowser: () => Promise<void>;
beforeAll(async () => {
  h = await startHarness({ smtp: true });
  ({ browser, close: closeBrowser } = await launchChromium());
});
afterAll(async () => {
  await closeBrowser?.();
  await h?.close();
});

const LINK = /\/services\/invitations\/[A-Za-z0-9_-]{43}/;

async function invite(local: string): Promise<{ sso: string; path: string }> {
  const email = `${local}@people.example.test`;
  await h.b.json.enterprise.createSso({ firstName: 'Pia', lastName: 'Page', email });
  const before = h.mails.length;
  const sso = await h.a.json.enterprise.inviteSso({ email });
  const mail = h.mails.slice(before)[0]!;
  const link = mail.mail.text!.match(
    new RegExp(`${PUBLIC_URL.replace(/[.:/]/g, '\\$&')}(${LINK.source})`),
  );
  expect(link, mail.mail.text).not.toBeNull();
  return { sso, path: link![1]! };
}

describe('the invitation page in Chromium', () => {
  // The mailed link names PUBLIC_URL (a host of the test); the browser opens its path on the server.
  it('opens the mailed link, shows the confirm page, and accepts on a click', async () => {
    const { sso, path } = await invite('pia');
    const page = await browser.newPage();
    const requests: { method: string; type: string | undefined; body: string | null }[] = [];
    page.on('request', (r) =>
      requests.push({ method: r.method(), type: r.headers()['content-type'], body: r.postData() }),
    );
    const opened = await page.goto(h.url + path);
    expect(opened?.status()).toBe(200);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Accept your invitation',
    );
    expect(await h.a.json.enterprise.getSsoStatus({ sso })).toBe('PENDING_ACTIVATION');
    await page.screenshot({ path: join(SCREENSHOTS, 'invitation-confirm.png'), fullPage: true });

    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Accept the invitation' }).click(),
    ]);
    // Post, redirect, get: the accepted page has an address of its own.
    expect(answer.status()).toBe(303);
    await page.waitForURL(`${h.url}/services/invitations/accepted`);
    expect(await page.locator('#accepted').textContent()).toBe('Invitation accepted');
    await page.screenshot({ path: join(SCREENSHOTS, 'invitation-accepted.png'), fullPage: true });
    // A reload shows it again: it does not post the used link a second time.
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(200);
    expect(await page.locator('#accepted').textContent()).toBe('Invitation accepted');
    expect(await h.a.json.enterprise.getSsoStatus({ sso })).toBe('ACTIVE');
    // What Chromium really sent: a urlencoded form with an empty body.
    const post = requests.find((r) => r.method === 'POST')!;
    expect(post.type).toBe('application/x-www-form-urlencoded');
    expect(post.body ?? '').toBe('');

    // Back and post again: the used link answers the 410 page.
    const again = await page.goto(h.url + path);
    expect(again?.status()).toBe(410);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'This link is no longer valid',
    );
    await page.close();
  });
});

describe('page forms as browsers post them, over HTTP', () => {
  it.each([
    ['urlencoded, empty', { 'Content-Type': 'application/x-www-form-urlencoded' }, ''],
    ['urlencoded, with a field', { 'Content-Type': 'application/x-www-form-urlencoded' }, 'a=b'],
    ['no content type, no body', {}, undefined],
  ] as const)('%s: the invitation is accepted', async (name, headers, body) => {
    const { sso, path } = await invite(`form-${name.replace(/\W+/g, '-')}`);
    const answer = await h.http(path, { method: 'POST', auth: null, headers, body });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toContain('Invitation accepted');
    expect(await h.a.json.enterprise.getSsoStatus({ sso })).toBe('ACTIVE');
  });
});

describe('what pages do not read', () => {
  // No page takes JSON: the root's JSON parser (25 MiB) is not inherited, so a JSON body is
  // refused before it is read, whatever its size. Multipart waits for web mode.
  it.each([
    ['JSON of 1 MiB', 'application/json', `{"a":"${'x'.repeat(1024 * 1024)}"}`],
    ['plain text', 'text/plain', 'a=b'],
    [
      'multipart (web mode will take it)',
      'multipart/form-data; boundary=XyZ',
      '--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--XyZ--\r\n',
    ],
  ] as const)('%s: 415, and the invitation is not accepted', async (name, type, body) => {
    const { sso, path } = await invite(`refused-${name.replace(/\W+/g, '-')}`);
    const answer = await h.http(path, {
      method: 'POST',
      auth: null,
      headers: { 'Content-Type': type },
      accept: 'application/json',
      body,
    });
    expect(answer.status, answer.text).toBe(415);
    expect(JSON.parse(answer.text).messages[0].type).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(await h.a.json.enterprise.getSsoStatus({ sso })).toBe('PENDING_ACTIVATION');
  });

  it('a form over 64 KiB or over 100 fields: 413, and the invitation is not accepted', async () => {
    const { sso, path } = await invite('refused-big-form');
    for (const body of [`a=${'x'.repeat(64 * 1024)}`, 'a=1&'.repeat(101)]) {
      const answer = await h.http(path, {
        method: 'POST',
        auth: null,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        accept: 'application/json',
        body,
      });
      expect(answer.status, answer.text).toBe(413);
      expect(JSON.parse(answer.text).messages[0].type).toBe('PAYLOAD_TOO_LARGE');
    }
    expect(await h.a.json.enterprise.getSsoStatus({ sso })).toBe('PENDING_ACTIVATION');
  });
});
