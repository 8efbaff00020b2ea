// Browser pages of the service. An invitation link must survive mail scanners that open every
// link first (DESIGN §6): its GET shows a confirm page and changes nothing; the POST from that
// page does the work. An unknown, used or expired link answers 410 with the same page for all.
import { escapeHtml } from '../html.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { acceptInvitation, describeInvitation } from '../domain/invitations.js';
import type { DomainContext } from '../domain/context.js';
import { isDomainError } from '../domain/errors.js';
import { registerEntryPages } from './entry-pages.js';

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem}button{font:inherit;padding:.5rem 1.25rem;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;cursor:pointer}</style>
</head><body><main>${body}</main></body></html>`;
}

export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: string,
): FastifyReply {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    )
    .type('text/html; charset=utf-8')
    .send(page(title, body));
}

const GONE_TITLE = 'This link is no longer valid';
const GONE_BODY = `<h1>${GONE_TITLE}</h1><p>It was already used, or it has expired. Ask for a new invitation.</p>`;

/** What a page form may post: small, and only as a browser posts it. */
const PAGE_FORM_LIMIT_BYTES = 64 * 1024;

/**
 * The pages, in a scope of their own that reads forms as browsers post them:
 * `application/x-www-form-urlencoded` (an empty body included) and `multipart/form-data`.
 */
export async function registerPages(app: FastifyInstance, domain: DomainContext): Promise<void> {
  await app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: PAGE_FORM_LIMIT_BYTES },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    scope.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer', bodyLimit: PAGE_FORM_LIMIT_BYTES },
      (request, body, done) => {
        readMultipart(String(request.headers['content-type']), body as Buffer).then(
          (fields) => done(null, fields),
          () => done(null, {}),
        );
      },
    );
    registerInvitationPages(scope, domain);
    registerEntryPages(scope, domain);
  });
}

async function readMultipart(contentType: string, body: Buffer): Promise<Record<string, string>> {
  const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of form) if (typeof value === 'string') fields[name] = value;
  return fields;
}

function registerInvitationPages(app: FastifyInstance, domain: DomainContext): void {
  const root = domain.config.serviceRoot;
  app.get<{ Params: { token: string } }>(`/${root}/invitations/:token`, async (request, reply) => {
    try {
      const invitation = await describeInvitation(domain, request.params.token);
      return sendPage(
        reply,
        200,
        'Accept your invitation',
        `<h1>Accept your invitation</h1>
<p>${escapeHtml(invitation.enterpriseName)} invites <strong>${escapeHtml(invitation.email)}</strong> to use its application.</p>
<form method="post"><button type="submit" id="accept">Accept the invitation</button></form>`,
      );
    } catch (error) {
      if (isDomainError(error) && error.statusCode === 410)
        return sendPage(reply, 410, GONE_TITLE, GONE_BODY);
      throw error;
    }
  });

  app.post<{ Params: { token: string } }>(`/${root}/invitations/:token`, async (request, reply) => {
    try {
      const accepted = await acceptInvitation(domain, request.params.token);
      return sendPage(
        reply,
        200,
        'Invitation accepted',
        `<h1 id="accepted">Invitation accepted</h1><p>${escapeHtml(accepted.email)} can now use ${escapeHtml(accepted.enterpriseName)}'s application.</p>`,
      );
    } catch (error) {
      if (isDomainError(error) && error.statusCode === 410)
        return sendPage(reply, 410, GONE_TITLE, GONE_BODY);
      throw error;
    }
  });
}
