// The file of one of a session's documents, for its page (docs/web-mode.md): a transaction's
// documents are those of its own pal version; a console session's, those of the pal's current
// version. Nothing else is reachable: an index the version does not have is a 404. And a file
// uploaded on the transaction's pages, for everyone who has a page of it (the manager checks the
// receipts the employee gave), as everyone sees its documents' values.
import type { DomainContext } from './context.js';
import { NotFoundError } from './errors.js';
import { getPalDocumentFile, getPalDocuments, type PalDocumentFile } from './pal-documents.js';
import { getPalDetails } from './pals.js';
import type { BrowserSession } from './sessions.js';
import { findUpload } from '../storage/document-state.js';
import { getTransactionDetails } from './transactions.js';

/** The `index`-th document (0-based, the manifest's order) of the session's pal version. */
export async function sessionDocumentFile(
  ctx: DomainContext,
  session: BrowserSession,
  index: number,
): Promise<PalDocumentFile> {
  const { palId, version } = session.transactionId
    ? await getTransactionDetails(ctx, session.enterpriseId, session.transactionId).then((t) => ({
        palId: t.palId,
        version: t.palVersion,
      }))
    : await getPalDetails(ctx, session.enterpriseId, session.palId).then((p) => ({
        palId: p.id,
        version: p.version,
      }));
  const documents = await getPalDocuments(ctx, session.enterpriseId, palId, version);
  const document = Number.isSafeInteger(index) ? documents[index] : undefined;
  if (!document) throw NotFoundError.of('document', String(index));
  return getPalDocumentFile(ctx, session.enterpriseId, palId, version, document.file);
}

/** A file uploaded on the pages of the session's transaction, by its upload's name. */
export async function sessionUploadFile(
  ctx: DomainContext,
  session: BrowserSession,
  name: string,
): Promise<{ filename: string; contentType: string; content: Uint8Array }> {
  const upload =
    session.transactionId === null
      ? undefined
      : await findUpload(ctx.db, session.transactionId, name);
  if (!upload) throw NotFoundError.of('upload', name);
  return { filename: upload.filename, contentType: upload.content_type, content: upload.content };
}
