// Browser pages of the service (invitations, entry and sessions), registered in a scope of their
// own that reads forms as browsers post them.
import type { FastifyInstance } from 'fastify';
import type { DomainContext } from '../domain/context.js';
import { registerEntryPages } from './entry-pages.js';
import { registerInvitationPages } from './invitation-pages.js';

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
