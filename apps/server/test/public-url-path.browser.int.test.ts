// The service behind a reverse proxy mounted at a sub-path, in real Chromium (docs/configuration.md,
// PUBLIC_URL): the proxy below forwards /pal/… to the server without /pal, as a proxy mounted at a
// path usually does, and answers 404 to anything else; PUBLIC_URL is the proxy's address with
// /pal. The employee follows the P3 link, fills in and sends the demo claim, the manager opens the
// mailed link, confirms and approves, and both open the files the pages link to (the form, the
// receipts, the completed PDF); an invitation is accepted the same way. Every request reaches the
// proxy under /pal, every redirect and cookie the server answers with stays there, and no page
// holds an href, src, action or data address outside it. Plain HTTP: public-url-path.int.test.ts.
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PEOPLE, ensureDemoPeople } from '../src/domain/demo.js';
import { deployPal } from '../src/domain/pals.js';
import { launchChromium, signPad, watchedPage } from './browser.js';
import { inkPng } from './documents.js';
import { startHarness, type Harness } from './harness.js';

// The functions passed to page.evaluate run in Chromium; the test project has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

const PAL = fileURLToPath(new URL('../../../examples/pals/expense-approval', import.meta.url));
const { employee, manager } = DEMO_PEOPLE;
const MOUNT = '/pal';
const RECEIPTS = { name: 'receipts.png', mimeType: 'image/png', buffer: inkPng(60, 40) };

/** What the proxy saw: each request, and the answer's status, Location and cookies. */
interface Seen {
  method: string;
  url: string;
  status?: number;
  location?: string;
  cookies: string[];
}

/** Headers of one hop (RFC 9110 §7.6.1): not forwarded. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'];
const endToEnd = (headers: IncomingHttpHeaders): IncomingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.includes(name)));

/** A reverse proxy at MOUNT: strips it and forwards to `target`; anything else is 404. */
async function startProxy(): Promise<{
  url: string;
  target: string;
  seen: Seen[];
  close(): Promise<void>;
}> {
  const seen: Seen[] = [];
  const proxy = {
    url: '',
    target: '',
    seen,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
  const server = createServer((request, response) => {
    const record: Seen = { method: request.method!, url: request.url!, cookies: [] };
    seen.push(record);
    if (!request.url!.startsWith(`${MOUNT}/`)) {
      record.status = 404;
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('outside the mount');
      return;
    }
    const forward = httpRequest(
      `${proxy.target}${request.url!.slice(MOUNT.length)}`,
      { method: request.method, headers: endToEnd(request.headers) },
      (answer) => {
        record.status = answer.statusCode;
        record.location = answer.headers.location;
        record.cookies = answer.headers['set-cookie'] ?? [];
        response.writeHead(answer.statusCode!, endToEnd(answer.headers));
        answer.pipe(response);
      },
    );
    forward.on('error', () => response.destroy());
    request.pipe(forward);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

let proxy: Awaited<ReturnType<typeof startProxy>>;
let h: Harness;
let browser: Browser;
let closeBrowser: () => Promise<void>;
/** Where people reach the service: the proxy, with its mount. */
let publicUrl: string;

beforeAll(async () => {
  proxy = await startProxy();
  publicUrl = `${proxy.url}${MOUNT}`;
  h = await startHarness({ smtp: true, env: { PUBLIC_URL: `${publicUrl}/` } });
  proxy.target = h.url;
  ({ browser, close: closeBrowser } = await launchChromium());
  await deployPal(h.domain, h.b.enterpriseId, resolve(PAL));
  await ensureDemoPeople(h.domain, h.b.enterpriseId);
});
afterAll(async () => {
  await closeBrowser?.();
  await h?.close();
  await proxy?.close();
});

/** A fresh cookie jar whose page records script errors and failed requests. */
const freshContext = () => watchedPage(browser, { viewport: { width: 1280, height: 900 } });

/**
 * Every address the page holds (href, src, action and the data-* attributes that hold one), as
 * the browser resolves it; `#…` and `data:` stay on the page and are left out.
 */
async function addressesOf(page: Page): Promise<string[]> {
  const raw: string[] = await page.evaluate(() => {
    const found: string[] = [];
    for (const element of document.querySelectorAll('*'))
      for (const { name, value } of element.attributes)
        if (
          ['href', 'src', 'action'].includes(name) ||
          (name.startsWith('data-') && value.startsWith('/'))
        )
          found.push(value);
    // A form without an action posts to the page's own address.
    for (const form of document.querySelectorAll('form:not([action])')) found.push(form.action);
    return found;
  });
  return raw
    .filter((value) => !/^(#|data:)/.test(value))
    .map((value) => new URL(value, page.url()).href);
}

/** The addresses of the page that leave the mount (none expected). */
async function outsideTheMount(page: Page): Promise<string[]> {
  return (await addressesOf(page)).filter((a) => !a.startsWith(`${publicUrl}/services/`));
}

/** Presses a button of a page's form and waits for the page it redirects to, under the mount. */
async function press(page: Page, button: string): Promise<void> {
  await Promise.all([
    page.waitForURL(`${publicUrl}/services/session/*`, { waitUntil: 'load' }),
    page.getByRole('button', { name: button }).click(),
  ]);
}

/** A file the page links to, asked for with that browser's cookies. */
async function opened(page: Page, href: string): Promise<{ status: number; type: string }> {
  const answer = await page.context().request.get(new URL(href, page.url()).href);
  return { status: answer.status(), type: answer.headers()['content-type'] ?? '' };
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

/** What the proxy saw go wrong: requests outside the mount, redirects and cookies leaving it. */
function leaks(): string[] {
  const found: string[] = [];
  for (const s of proxy.seen) {
    if (!s.url.startsWith(`${MOUNT}/`)) found.push(`${s.method} ${s.url} (outside the mount)`);
    if (s.location !== undefined && !s.location.startsWith(`${MOUNT}/services/`))
      found.push(`${s.method} ${s.url}: Location ${s.location}`);
    for (const cookie of s.cookies)
      if (!cookie.includes(`; Path=${MOUNT}/services/;`))
        found.push(`${s.method} ${s.url}: Set-Cookie ${cookie}`);
  }
  return found;
}

describe('behind a proxy mounted at /pal', () => {
  it('a claim is entered, sent, mailed, approved and its files opened, all under the mount', async () => {
    // 1. The employee follows the pal's P3 link: the proxy's address, with the mount.
    const entry = await h.b.json.pals.createPalToken({
      palId: 'expense-approval',
      userSSO: employee.sso,
    });
    expect(entry.startsWith(`${publicUrl}/services/enter/`)).toBe(true);
    const erika = await freshContext();
    const page = erika.page;
    expect((await page.goto(entry))?.status()).toBe(200);
    expect(page.url()).toMatch(new RegExp(`^${publicUrl}/services/session/[\\w-]{12}$`));
    // The page's script, stylesheet, pdf.js and its fonts came through the proxy: it drew the
    // form and made the signature pad.
    await page.waitForSelector('main[data-pages-drawn="true"]');
    await page.waitForSelector('main[data-pads-ready="true"]');
    expect(await outsideTheMount(page)).toEqual([]);
    expect(await addressesOf(page)).toEqual(
      expect.arrayContaining([
        page.url(),
        `${page.url()}/documents/0`,
        expect.stringMatching(/\/pal\/services\/assets\/page-[\w-]+\/session-page\.css$/),
        expect.stringMatching(/\/pal\/services\/assets\/page-[\w-]+\/session-page\.js$/),
      ]),
    );
    expect(proxy.seen.map((s) => s.url)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/pal\/services\/assets\/pdfjs-[\d.]+\/pdf\.worker\.min\.mjs$/),
      ]),
    );
    const cookies = await erika.context.cookies();
    expect(cookies.map((c) => c.path)).toEqual([`${MOUNT}/services/`]);

    // The claim, filled in and sent.
    await page.getByLabel('Date of the claim').fill('2026-11-20');
    await page.getByLabel('Cost centre').fill('CC-4711');
    await page.getByLabel('Amount').fill('184.60');
    await page.getByLabel('What was bought, and why').fill('Train to Geneva and back');
    await page.getByLabel('The receipts are attached to this claim.').check();
    await page.getByLabel('Receipts: a PDF, or a photo of them').setInputFiles(RECEIPTS);
    await signPad(page, 'employee-signature');
    const mailsBefore = h.mails.length;
    await press(page, 'Submit the claim');
    expect(await page.locator('#outcome').textContent()).toContain('Submitted CHF 184.60');
    expect(await outsideTheMount(page)).toEqual([]);
    // The form and the receipts open from the page.
    const form = await page.getByRole('link', { name: 'Open claim-form.pdf' }).getAttribute('href');
    expect(await opened(page, form!)).toEqual({ status: 200, type: 'application/pdf' });
    const receipts = await page.getByRole('link', { name: RECEIPTS.name }).getAttribute('href');
    expect(await opened(page, receipts!)).toEqual({ status: 200, type: 'image/png' });

    // 2. The manager's mail links to the proxy, with the mount; confirm, sign and approve.
    const mail = await until('the manager’s mail', async () =>
      h.mails.length > mailsBefore ? h.mails.at(-1) : undefined,
    );
    expect(mail.envelope.to).toEqual([manager.email]);
    const link = new RegExp(`${publicUrl.replace(/[.:/]/g, '\\$&')}/services/mail\\?\\S+`).exec(
      mail.mail.text!,
    )![0];
    const morgan = await freshContext();
    const managerPage = morgan.page;
    expect((await managerPage.goto(link))?.status()).toBe(200);
    expect(await outsideTheMount(managerPage)).toEqual([]);
    await Promise.all([
      managerPage.waitForURL(`${publicUrl}/services/session/*`, { waitUntil: 'load' }),
      managerPage.locator('#confirm').click(),
    ]);
    await managerPage.waitForSelector('main[data-pads-ready="true"]');
    expect(await outsideTheMount(managerPage)).toEqual([]);
    await signPad(managerPage, 'manager-signature');
    await press(managerPage, 'Approve and sign');
    expect(await managerPage.locator('#outcome').textContent()).toContain('Approved CHF 184.60');

    // 3. The completed claim, once the outbox wrote it: the page's script shows its link.
    const download = managerPage.locator('a.completed-download');
    await download.waitFor({ timeout: 20_000 });
    expect(await outsideTheMount(managerPage)).toEqual([]);
    const completed = (await download.getAttribute('href'))!;
    expect(await opened(managerPage, completed)).toEqual({
      status: 200,
      type: 'application/pdf',
    });

    expect(leaks()).toEqual([]);
    expect(erika.problems).toEqual([]);
    expect(morgan.problems).toEqual([]);
    await erika.context.close();
    await morgan.context.close();
  }, 120_000);

  it('an invitation is accepted under the mount', async () => {
    const email = 'ivy@people.example.test';
    await h.a.json.enterprise.createSso({ firstName: 'Ivy', lastName: 'Invitee', email });
    const before = h.mails.length;
    await h.b.json.enterprise.inviteSso({ email });
    const mail = await until('the invitation', async () =>
      h.mails.slice(before).find((m) => m.envelope.to.includes(email)),
    );
    const link = new RegExp(
      `${publicUrl.replace(/[.:/]/g, '\\$&')}/services/invitations/[\\w-]{43}`,
    ).exec(mail.mail.text!)![0];
    const { context, page, problems } = await freshContext();
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await outsideTheMount(page)).toEqual([]);
    await Promise.all([
      page.waitForURL(`${publicUrl}/services/invitations/accepted`),
      page.locator('#accept').click(),
    ]);
    expect(await page.locator('#accepted').textContent()).toBe('Invitation accepted');
    expect(leaks()).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
