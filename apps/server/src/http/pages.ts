// Browser pages of the service (invitations, entry and sessions), registered in a scope of their
// own that reads forms as browsers post them, and nothing else.
import { parseUrlEncoded } from '@pal-workflow/server-skeleton';
import type { FastifyInstance } from 'fastify';
import type { WorkflowContext } from '../workflows/context.js';
import { loadAssets, registerAssets } from './assets.js';
import { registerEntryPages } from './entry-pages.js';
import { registerInvitationPages } from './invitation-pages.js';

/** What a page form may post: small, and only as a browser posts it. */
export const PAGE_FORM_LIMIT_BYTES = 64 * 1024;

/**
 * The pages, in a scope of their own. Their forms post `application/x-www-form-urlencoded` (an
 * empty body included), up to PAGE_FORM_LIMIT_BYTES and the skeleton's 100 fields. No other
 * body is read: the root's JSON parser (with its 25 MiB limit) is not inherited, and JSON, plain
 * text or any other type posted to a page answers 415 before its body is read.
 */
export async function registerPages(app: FastifyInstance, domain: WorkflowContext): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'buffer', bodyLimit: PAGE_FORM_LIMIT_BYTES },
      (_request, body, done) => {
        let fields: Record<string, string>;
        try {
          fields = lastValues(parseUrlEncoded(body as Buffer));
        } catch (error) {
          done(error as Error);
          return;
        }
        done(null, fields);
      },
    );
    // Web mode's pages will take `multipart/form-data` (files) here, with a limit of their own.
    const assets = loadAssets(domain.config.publicServicePath);
    registerAssets(scope, domain.config.serviceRoot, assets);
    registerInvitationPages(scope, domain);
    registerEntryPages(scope, domain, assets.urls);
  });
}

/** A page reads one value per name: the last one given, as a browser's form submits one. */
function lastValues(fields: Record<string, string | string[] | undefined>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(fields))
    if (value !== undefined) out[name] = Array.isArray(value) ? value[value.length - 1]! : value;
  return out;
}
