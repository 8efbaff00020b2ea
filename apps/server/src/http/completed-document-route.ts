// GET /{service_root}/session/{handle}/documents/{index}/completed: the completed PDF of the session's own
// transaction's document (docs/web-mode.md, "Completed documents"), as a download. Only with a
// live session, and only of its own transaction: anything else, and a document whose completed
// PDF is not written yet, is one 404 page.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { completedFileName, getCompletedDocumentAt } from '../domain/completed-documents.js';
import type { WorkflowContext } from '../workflows/context.js';
import type { BrowserSession } from '../domain/sessions.js';
import { sendPage } from './page.js';

const NOT_HERE = {
  title: 'No completed document here',
  body: '<h1>No completed document here</h1><p>The document is completed once the transaction is: come back to the transaction page then.</p>',
};

/** The live session of page `handle` as a request's cookie names it (http/entry-pages.ts). */
export type SessionOfPage = (
  request: FastifyRequest,
  handle: string,
) => Promise<BrowserSession | undefined>;

export function registerCompletedDocumentRoute(
  app: FastifyInstance,
  domain: WorkflowContext,
  page: { path: string; sessionAt: SessionOfPage },
): void {
  app.get<{ Params: { handle: string; index: string } }>(page.path, async (request, reply) => {
    const session = await page.sessionAt(request, request.params.handle);
    if (!session)
      return sendPage(
        reply,
        401,
        'Your session has ended',
        '<h1>Your session has ended</h1><p>Open a new link to download the document.</p>',
      );
    const index = /^\d{1,4}$/.test(request.params.index) ? Number(request.params.index) : -1;
    const completed =
      session.transactionId !== null && index >= 0
        ? await getCompletedDocumentAt(domain, session.enterpriseId, session.transactionId, index)
        : undefined;
    if (!completed) return sendPage(reply, 404, NOT_HERE.title, NOT_HERE.body);
    return reply
      .code(200)
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="${completedFileName(completed.file)}"`)
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .header('Cross-Origin-Resource-Policy', 'same-origin')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', "default-src 'none'; sandbox")
      .send(Buffer.from(completed.content));
  });
}
