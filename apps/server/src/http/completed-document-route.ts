// GET /{service_root}/session/{handle}/documents/{index}/completed: the completed PDF of the session's own
// transaction's document (docs/web-mode.md, "Completed documents"), as a download (with `?view`,
// shown in the browser). Only with a
// live session, and only of its own transaction: anything else, and a document whose completed
// PDF is not written yet, is one 404 page.
import type { FastifyInstance } from 'fastify';
import { completedFileName, getCompletedDocumentAt } from '../domain/completed-documents.js';
import type { WorkflowContext } from '../workflows/context.js';
import type { SessionOfPage } from './session-cookies.js';
import { sendPage, sendSandboxedFile } from './page.js';

const NOT_HERE = {
  title: 'No completed document here',
  body: '<h1>No completed document here</h1><p>The document is completed once the transaction is: come back to the transaction page then.</p>',
};

export function registerCompletedDocumentRoute(
  app: FastifyInstance,
  domain: WorkflowContext,
  page: SessionOfPage & { path: string },
): void {
  app.get<{ Params: { handle: string; index: string }; Querystring: { view?: string } }>(
    page.path,
    async (request, reply) => {
      const { handle } = request.params;
      const read = await page.sessionAt(request, reply, handle);
      if (read.state !== 'live') return page.noSession(reply, read, handle);
      const { session } = read;
      const index = /^\d{1,4}$/.test(request.params.index) ? Number(request.params.index) : -1;
      const completed =
        session.transactionId !== null && index >= 0
          ? await getCompletedDocumentAt(domain, session.enterpriseId, session.transactionId, index)
          : undefined;
      if (!completed) return sendPage(reply, 404, NOT_HERE.title, NOT_HERE.body);
      // `?view`: shown in the browser (the page's "Open" link); else a download.
      const disposition = request.query.view !== undefined ? 'inline' : 'attachment';
      return sendSandboxedFile(reply.code(200).header('Cache-Control', 'no-store'), {
        contentType: 'application/pdf',
        disposition: `${disposition}; filename="${completedFileName(completed.file)}"`,
        content: completed.content,
      });
    },
  );
}
