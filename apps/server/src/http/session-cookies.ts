// A browser's session cookies (docs/entry.md): one per session, named by the session's handle
// (`pal_session_{handle}`), so that a browser holds every link it opened at once and each session
// page, at its own address, acts for its own session only. HttpOnly, SameSite=Lax,
// Path={PUBLIC_URL's path}/{service_root}/ (the path the browser sees, behind a proxy mounted at a
// sub-path too), Secure under an https PUBLIC_URL; each lives 30 minutes from its session's last
// page or form, as the session does.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DomainContext } from '../domain/context.js';
import {
  liveSessionsOf,
  sessionHandle,
  SESSION_HANDLE,
  SESSION_IDLE_MS,
  type SessionRead,
} from '../domain/sessions.js';

const PREFIX = 'pal_session_';
/**
 * The session cookies a browser keeps. An entry past it drops the cookies of ended sessions, then
 * those least recently used: a client that enters again and again keeps a Cookie header of a
 * couple of kilobytes, far below what a server takes (16 KiB).
 */
export const MAX_BROWSER_SESSIONS = 20;

/** What the routes below a session page are given to find its session (http/entry-pages.ts). */
export interface SessionOfPage {
  /** The session of page `handle` as the request's cookie names it (its cookie kept or dropped). */
  sessionAt: (request: FastifyRequest, reply: FastifyReply, handle: string) => Promise<SessionRead>;
  /** The page for a request without a live session (a withdrawn one's cookie dropped). */
  noSession: (
    reply: FastifyReply,
    read: Exclude<SessionRead, { state: 'live' }>,
    handle: string,
  ) => unknown;
}

export interface SessionCookies {
  /** The Set-Cookie header that keeps the session `value` another 30 minutes. */
  keep(value: string): string;
  /** The Set-Cookie header that drops the cookie of session `handle`. */
  drop(handle: string): string;
  /** The value of the cookie of session `handle` in a request, if it is that session's. */
  valueFor(request: FastifyRequest, handle: string): string | undefined;
  /** Every session cookie value of a request. */
  valuesOf(request: FastifyRequest): string[];
  /**
   * The Set-Cookie headers of an entry that started session `value`: its cookie, and drops that
   * keep the browser within MAX_BROWSER_SESSIONS.
   */
  forEntry(domain: DomainContext, request: FastifyRequest, value: string): Promise<string[]>;
}

/** `publicServicePath`: Config.publicServicePath, e.g. `/services` or `/pal/services`. */
export function sessionCookies(publicServicePath: string, secure: boolean): SessionCookies {
  const attributes = `Path=${publicServicePath}/; HttpOnly; SameSite=Lax`;
  const set = (name: string, value: string, maxAge: number) =>
    `${name}=${value}; ${attributes}; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  const keep = (value: string) => set(PREFIX + sessionHandle(value), value, SESSION_IDLE_MS / 1000);
  return {
    keep,
    drop: (handle) => set(PREFIX + handle, '', 0),
    valuesOf: (request) => cookiesOf(request).map((cookie) => cookie.value),
    valueFor(request, handle) {
      // A name may come twice (one planted from a sibling domain): the value that is the
      // handle's session's counts.
      const name = PREFIX + handle;
      return cookiesOf(request).find(
        (cookie) => cookie.name === name && sessionHandle(cookie.value) === handle,
      )?.value;
    },
    async forEntry(domain, request, value) {
      const held = cookiesOf(request);
      const names = new Set(held.map((cookie) => cookie.name));
      if (names.size < MAX_BROWSER_SESSIONS) return [keep(value)];
      const live = await liveSessionsOf(
        domain,
        held.map((cookie) => cookie.value),
      );
      const kept = new Set(live.slice(0, MAX_BROWSER_SESSIONS - 1).map((s) => s.cookie));
      for (const cookie of held)
        if (kept.has(cookie.value) && cookie.name === PREFIX + sessionHandle(cookie.value))
          names.delete(cookie.name);
      return [keep(value), ...[...names].map((name) => set(name, '', 0))];
    },
  };
}

/**
 * A request's session cookies, in the order sent. Other names are not looked at: a name is only
 * ever sent back (to drop it) when it is one this service gives.
 */
function cookiesOf(request: FastifyRequest): { name: string; value: string }[] {
  const found: { name: string; value: string }[] = [];
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    const name = part.slice(0, at).trim();
    if (at > 0 && name.startsWith(PREFIX) && SESSION_HANDLE.test(name.slice(PREFIX.length)))
      found.push({ name, value: part.slice(at + 1).trim() });
  }
  return found;
}
