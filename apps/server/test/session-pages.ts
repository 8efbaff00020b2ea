// What a browser does with the entry and session pages (docs/entry.md), as plain HTTP for the
// suites that do not need Chromium: GETs without credentials that do not follow redirects, form
// posts as a browser sends them, the session cookie and the page's CSRF token.
import { expect } from 'vitest';
import type { Answer } from './harness.js';

export interface SessionBrowser {
  /** A browser's GET: no credentials, redirects not followed, the cookie if any. */
  open(path: string, cookie?: string): Promise<Answer>;
  /** A form post (urlencoded, redirects not followed) to `path`, by default the session page. */
  post(
    cookie: string | undefined,
    fields: Record<string, string>,
    headers?: Record<string, string>,
    path?: string,
  ): Promise<Answer>;
  /** A multipart post to the session page, as a browser sends a form with enctype="multipart/form-data". */
  postMultipart(
    cookie: string,
    fields: Record<string, string>,
    files?: Record<string, { name: string; type: string; bytes: Uint8Array }>,
  ): Promise<Answer>;
  /** Redeems an entry token: 303 to the session page, whose 200 answer comes back with the cookie. */
  enter(token: string): Promise<{ cookie: string; page: Answer }>;
}

export const SESSION_PATH = '/services/session';

async function answer(response: Response): Promise<Answer> {
  return {
    status: response.status,
    type: response.headers.get('Content-Type') ?? '',
    headers: response.headers,
    text: await response.text(),
  };
}

/** The `name=value` of the session cookie an answer sets. */
export function cookieOf(page: Answer): string {
  const header = page.headers.get('set-cookie') ?? '';
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
    async post(cookie, fields, headers = {}, path = SESSION_PATH) {
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
      return answer(
        await fetch(url + SESSION_PATH, {
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
      expect(entered.headers.get('location')).toBe(SESSION_PATH);
      const cookie = cookieOf(entered);
      const page = await open(SESSION_PATH, cookie);
      expect(page.status, page.text).toBe(200);
      return { cookie, page };
    },
  };
}
