// A PUBLIC_URL with a path (docs/configuration.md): the service sits behind a proxy mounted at
// that path, which strips it before forwarding. The routes stay at /{service_root}/…, as the
// proxy forwards them (these requests are sent that way); every address the service hands the
// browser carries the path: the entry's and the forms' redirects, the session cookie's Path, the
// session page's form, links, documents and assets, the refusal pages' links, the invitation's
// redirect and the page of a form that did not arrive in time. Without a path nothing changes
// (test/entry.int.test.ts and the others run with a PUBLIC_URL without one). Through a real proxy,
// in Chromium: test/public-url-path.browser.int.test.ts.
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PEOPLE, ensureDemoPeople } from '../src/domain/demo.js';
import { deployPal } from '../src/domain/pals.js';
import { startHarness, type Harness } from './harness.js';

const PAL = fileURLToPath(new URL('../../../examples/pals/expense-approval', import.meta.url));
/** Where people reach the service: a proxy's mount at /pal. */
const PUBLIC = 'http://pal.example.test:8443/pal';
const MOUNT = '/pal';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    smtp: true,
    // Set with a trailing slash, as an operator may write it. A short request time for the page
    // of a form that did not arrive in time.
    env: { PUBLIC_URL: `${PUBLIC}/`, REQUEST_TIMEOUT_MS: '1000' },
  });
  await deployPal(h.domain, h.b.enterpriseId, resolve(PAL));
  await ensureDemoPeople(h.domain, h.b.enterpriseId);
});
afterAll(() => h?.close());

/** A browser's request as the proxy forwards it (the mount stripped), redirects not followed. */
const browse = (path: string, init: RequestInit = {}) =>
  fetch(h.url + path, {
    redirect: 'manual',
    ...init,
    headers: { Accept: 'text/html', ...init.headers },
  });
/** The address the proxy forwards for one the browser asks for. */
const forwarded = (address: string) => {
  expect(address.startsWith(`${MOUNT}/`), address).toBe(true);
  return address.slice(MOUNT.length);
};
const urlencoded = { 'Content-Type': 'application/x-www-form-urlencoded' };

/**
 * Every address in a page: href, src, action, and the data-* attributes that hold one. `#…` and
 * `data:` stay on the page.
 */
function addressesIn(html: string): string[] {
  return [...html.matchAll(/\s(href|src|action|data-[\w-]+)="([^"]*)"/g)]
    .filter(([, name, value]) => !name!.startsWith('data-') || value!.startsWith('/'))
    .map(([, , value]) => value!.replace(/&(amp|#38);/g, '&'))
    .filter((value) => !/^(#|data:)/.test(value));
}

/** Enters with a fresh P3 link: the session's cookie (`name=value`), its page's address and HTML. */
async function enter(): Promise<{ cookie: string; address: string; html: string }> {
  const link = await h.b.json.pals.createPalToken({
    palId: 'expense-approval',
    userSSO: DEMO_PEOPLE.employee.sso,
  });
  expect(link).toMatch(
    new RegExp(`^${PUBLIC.replace(/[.:/]/g, '\\$&')}/services/enter/[\\w-]{43}$`),
  );
  const entered = await browse(forwarded(new URL(link).pathname));
  expect(entered.status).toBe(303);
  const [setCookie] = entered.headers.getSetCookie();
  expect(setCookie).toMatch(
    /^pal_session_[\w-]{12}=[\w-]{43}; Path=\/pal\/services\/; HttpOnly; SameSite=Lax; Max-Age=1800$/,
  );
  const cookie = setCookie!.split(';')[0]!;
  const handle = /^pal_session_([\w-]{12})=/.exec(cookie)![1]!;
  const address = entered.headers.get('location')!;
  expect(address).toBe(`/pal/services/session/${handle}`);
  const page = await browse(forwarded(address), { headers: { Cookie: cookie } });
  expect(page.status).toBe(200);
  return { cookie, address, html: await page.text() };
}

describe('PUBLIC_URL with a path', () => {
  it('the entry redirects, the cookie and every address of the session page carry the path', async () => {
    const { cookie, address, html } = await enter();
    const addresses = addressesIn(html);
    expect(addresses.filter((a) => !a.startsWith('/pal/services/'))).toEqual([]);
    expect(addresses).toEqual(
      expect.arrayContaining([
        address,
        `${address}/documents/0`,
        expect.stringMatching(/^\/pal\/services\/assets\/page-[\w-]{12}\/session-page\.css$/),
        expect.stringMatching(/^\/pal\/services\/assets\/page-[\w-]{12}\/session-page\.js$/),
        expect.stringMatching(/^\/pal\/services\/assets\/pdfjs-[\d.]+\/pdf\.min\.mjs$/),
        expect.stringMatching(
          /^\/pal\/services\/assets\/signature_pad-[\d.]+\/signature_pad\.min\.js$/,
        ),
      ]),
    );
    expect(html).toContain(`<form method="post" action="${address}"`);
    // Each is served where the proxy forwards it.
    for (const each of new Set(addresses.filter((a) => !a.endsWith('/')))) {
      const answer = await browse(forwarded(each), { headers: { Cookie: cookie } });
      expect(answer.status, each).toBe(200);
    }

    // The address without a handle: 303 to the page, under the path.
    const bare = await browse('/services/session', { headers: { Cookie: cookie } });
    expect(bare.status).toBe(303);
    expect(bare.headers.get('location')).toBe(address);
  });

  it('the session form’s redirects and refusal pages carry the path', async () => {
    const { cookie, address, html } = await enter();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const post = (path: string, body: string, headers: Record<string, string> = urlencoded) =>
      browse(path, { method: 'POST', headers: { Cookie: cookie, ...headers }, body });

    // Sent incomplete: back to the page, which says what is missing.
    const sent = await post(
      forwarded(address),
      new URLSearchParams({ csrf, action: 'submit' }).toString(),
    );
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(address);
    // Posted to the address without a handle: 307 to the page its CSRF token names.
    const bare = await post('/services/session', new URLSearchParams({ csrf }).toString());
    expect(bare.status).toBe(307);
    expect(bare.headers.get('location')).toBe(address);
    // Without the page's CSRF token: refused, with a link to the page.
    const refused = await post(forwarded(address), 'csrf=wrong&action=submit');
    expect(refused.status).toBe(403);
    expect(addressesIn(await refused.text())).toEqual([address]);
    // A body that cannot be read, at the address without a handle: refused, with a link there.
    const unreadable = await post('/services/session', 'not multipart', {
      'Content-Type': 'multipart/form-data; boundary=x',
    });
    expect(unreadable.status).toBe(400);
    expect(addressesIn(await unreadable.text())).toEqual(['/pal/services/session']);
  });

  it('a mailed link’s confirm form refused from another site links to its page under the path', async () => {
    const query = 'encryptedToken=a&encryptedAction=b';
    const refused = await browse(`/services/mail?${query}`, {
      method: 'POST',
      headers: { 'Sec-Fetch-Site': 'cross-site', ...urlencoded },
      body: '',
    });
    expect(refused.status).toBe(403);
    expect(addressesIn(await refused.text())).toEqual([`/pal/services/mail?${query}`]);
  });

  it('the invitation’s link and its redirect carry the path', async () => {
    const email = 'ivy@people.example.test';
    await h.a.json.enterprise.createSso({ firstName: 'Ivy', lastName: 'Invitee', email });
    const before = h.mails.length;
    await h.b.json.enterprise.inviteSso({ email });
    const mail = h.mails.slice(before).find((m) => m.envelope.to.includes(email));
    const link = new RegExp(
      `${PUBLIC.replace(/[.:/]/g, '\\$&')}(/services/invitations/[\\w-]{43})`,
    ).exec(mail!.mail.text!)![1]!;
    const accepted = await browse(link, { method: 'POST', headers: urlencoded, body: '' });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe('/pal/services/invitations/accepted');
    expect((await browse(forwarded(accepted.headers.get('location')!))).status).toBe(200);
  });

  it('the page of a form that did not arrive in time links back under the path', async () => {
    const { port } = new URL(h.url);
    const answer = await new Promise<string>((done, fail) => {
      const socket = connect(Number(port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => done(text));
      socket.on('error', fail);
      // The headers, and none of the body they announce.
      socket.write(
        `POST /services/invitations/${'A'.repeat(43)} HTTP/1.1\r\nHost: pal.example.test\r\nAccept: text/html\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(addressesIn(answer)).toEqual([`/pal/services/invitations/${'A'.repeat(43)}`]);
  });
});
