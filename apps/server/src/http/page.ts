// The frame of every browser page: one HTML shell, and the headers that keep pages out of caches,
// referrers and frames; and those of the files a page opens (documents, uploads, completed PDFs).
import type { FastifyReply } from 'fastify';
import { isDomainError } from '../domain/errors.js';
import { escapeHtml } from '../html.js';

/** A page's title and the HTML of its main element. */
export interface PageText {
  title: string;
  body: string;
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328;overflow-wrap:anywhere}
h1{font-size:1.5rem}p>a:only-child{display:inline-block;padding:.625rem 0}button{font:inherit;min-height:44px;padding:.5rem 1.25rem;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;cursor:pointer}</style>
</head><body><main>${body}</main></body></html>`;
}

/** A plain page's policy: its own inline style, nothing else. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: string,
): FastifyReply {
  return sendHtml(reply, status, page(title, body), PAGE_CSP);
}

/**
 * A browser's request for a page: not under the operations' paths (`/{service}/rest/…`, the user
 * service's root), and HTML preferred by its Accept, as every browser sends it on navigation and
 * on a form's post.
 */
export function wantsPage(url: string, accept: string | undefined, serviceRoot: string): boolean {
  const path = url.split('?')[0]!;
  // The root too: a link cut down to its host is a person's, not a client's.
  const pages = path === '/' || path.startsWith(`/${serviceRoot}/`);
  if (!pages || path.startsWith(`/${serviceRoot}/rest/`)) return false;
  return /^\s*text\/html\b/i.test(accept ?? '');
}

/**
 * The session page's policy: its script, stylesheet, pdf.js and its worker from this origin only,
 * nothing inline, no eval. The document files are fetched (connect-src); an image document and a
 * drawn signature are images (a signature as a `data:` URL, a preview as one the pad makes).
 */
export const SESSION_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** An HTML answer with the headers every page has, under the given Content-Security-Policy. */
export function sendHtml(
  reply: FastifyReply,
  status: number,
  html: string,
  csp: string,
): FastifyReply {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('Content-Security-Policy', csp)
    .type('text/html; charset=utf-8')
    .send(html);
}

/** True when the domain refused because a link or token was used or has expired (410). */
export function isGone(error: unknown): boolean {
  return isDomainError(error) && error.statusCode === 410;
}

/** Answers a used or expired link with the `gone` page; any other error goes on to the error handler. */
export function sendGonePageOrThrow(
  reply: FastifyReply,
  error: unknown,
  gone: PageText,
): FastifyReply {
  if (isGone(error)) return sendPage(reply, 410, gone.title, gone.body);
  throw error;
}

/**
 * A file a session page opens (a document, an upload, a completed PDF): only to this origin, never
 * sniffed as another type, and in a sandbox, so that a PDF's scripts never run with the service's
 * origin. The caller says how long it may be kept (`Cache-Control`) and how it opens.
 */
export function sendSandboxedFile(
  reply: FastifyReply,
  file: { contentType: string; disposition: string; content: Uint8Array },
): FastifyReply {
  return reply
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cross-Origin-Resource-Policy', 'same-origin')
    .header('Content-Security-Policy', "default-src 'none'; sandbox")
    .header('Content-Disposition', file.disposition)
    .type(file.contentType)
    .send(Buffer.from(file.content));
}
