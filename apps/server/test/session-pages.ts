// What a browser does with the entry and session pages (docs/entry.md), as plain HTTP for the
// suites that do not need Chromium: GETs without credentials that do not follow redirects, form
// posts as a browser sends them, the session cookie and the page's CSRF token.
import { expect } from 'vitest';
import type { Answer } from './harness.js';

export interface SessionBrowser {
  /** A browser's GET: no credentials, redirects not followed, the cookie if any. */
  open(path: string, cookie?: string): Promise<Answer>;
  /** A GET of the page of the session whose cookie is `cookie`. */
  page(cookie: string): Promise<Answer>;
  /** A form post (urlencoded, redirects not followed) to `path`, by default the cookie's session page. */
  post(
    cookie: string | undefined,
    fields: Record<string, string>,
    headers?: Record<string, string>,
    path?: string,
  ): Promise<Answer>;
  /** A multipart post to the cookie's session page, as a browser sends a form with enctype="multipart/form-data". */
  postMultipart(
    cookie: string,
    fields: Record<string, string>,
    files?: Record<string, { name: string; type: string; bytes: Uint8Array }>,
  ): Promise<Answer>;
  /** Redeems an entry token: 303 to the session page, whose 200 answer comes back with the cookie. */
  enter(token: string): Promise<{ cookie: string; page: Answer }>;
}

/** Each session's page is at its own address, named by its handle (as its cookie's name is). */
export const SESSION_ROOT = '/services/session';
const COOKIE_PREFIX = 'pal_session_';

/** The address of the page of the session whose cookie (`name=value`) is `cookie`. */
export function sessionPathOf(cookie: string): string {
  const name = cookie.slice(0, cookie.indexOf('='));
  expect(name.startsWith(COOKIE_PREFIX), cookie).toBe(true);
  return `${SESSION_ROOT}/${name.slice(COOKIE_PREFIX.length)}`;
}

async function answer(response: Response): Promise<Answer> {
  return {
    status: response.status,
    type: response.headers.get('Content-Type') ?? '',
    headers: response.headers,
    text: await response.text(),
  };
}

/** The `name=value` of the (first) session cookie an answer sets. */
export function cookieOf(page: Answer): string {
  const header = page.headers.getSetCookie()[0] ?? '';
  return header.split(';')[0]!;
}

/** The CSRF token of a session page's form. */
export function csrfOf(page: Answer): string {
  return /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
}

export function sessionBrowser(url: string): SessionBrowser {
  const open = async (path: string, cookie?: string) =>
    answer(
      await fetch(url + path, { redirect: 'manual', headers: cookie ? { Cookie: cookie } : {} }),
    );
  return {
    open,
    page: (cookie) => open(sessionPathOf(cookie), cookie),
    async post(cookie, fields, headers = {}, path = cookie ? sessionPathOf(cookie) : SESSION_ROOT) {
      return answer(
        await fetch(url + path, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'Content-Type': 'application/x-www-form-urlencoded',
            ...(cookie ? { Cookie: cookie } : {}),
            ...headers,
          },
          body: new URLSearchParams(fields).toString(),
        }),
      );
    },
    async postMultipart(cookie, fields, files = {}) {
      const body = new FormData();
      for (const [name, value] of Object.entries(fields)) body.append(name, value);
      for (const [name, file] of Object.entries(files))
        body.append(name, new Blob([file.bytes], { type: file.type }), file.name);
      // Written part by part as it is read, as a browser sends a form: a refusal made part-way
      // must still reach it (the service reads the rest; a socket closed on unread input resets).
      return answer(
        await fetch(url + sessionPathOf(cookie), {
          method: 'POST',
          redirect: 'manual',
          headers: { Cookie: cookie },
          body,
        }),
      );
    },
    async enter(token) {
      const entered = await open(`/services/enter/${token}`);
      expect(entered.status, entered.text).toBe(303);
      const cookie = cookieOf(entered);
      expect(entered.headers.get('location')).toBe(sessionPathOf(cookie));
      const page = await open(sessionPathOf(cookie), cookie);
      expect(page.status, page.text).toBe(200);
      return { cookie, page };
    },
  };
}
