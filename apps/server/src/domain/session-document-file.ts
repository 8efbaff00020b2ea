// The file of one of a session's documents, for its page (docs/web-mode.md): a transaction's
// documents are those of its own pal version; a console session's, those of the pal's current
// version. Nothing else is reachable: an index the version does not have is a 404.
import type { DomainContext } from './context.js';
import { NotFoundError } from './errors.js';
import { getPalDocumentFile, getPalDocuments, type PalDocumentFile } from './pal-documents.js';
import { getPalDetails } from './pals.js';
import type { BrowserSession } from './sessions.js';
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
