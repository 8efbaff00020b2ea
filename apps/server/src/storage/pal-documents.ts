// The pal_documents and document_contents tables: a pal version's documents and their bytes.
import type { Db } from './database.js';

/** One document of a version as deployment writes it. */
export interface PalDocumentWrite {
  position: number;
  file: string;
  digest: string;
  /** JSON of the domain's PalDocument. */
  document: string;
  content: Uint8Array;
}

/**
 * Writes a version's documents (inside the deployment's database transaction). Bytes the
 * enterprise already holds under the same digest are not written again.
 */
export async function insertPalDocuments(
  db: Db,
  key: { enterpriseId: string; palId: string; version: number; now: string },
  documents: readonly PalDocumentWrite[],
): Promise<void> {
  for (const d of documents) {
    await db
      .insertInto('document_contents')
      .values({
        enterprise_id: key.enterpriseId,
        digest: d.digest,
        size: d.content.byteLength,
        content: d.content,
        created_at: key.now,
      })
      .onConflict((c) => c.columns(['enterprise_id', 'digest']).doNothing())
      .execute();
    await db
      .insertInto('pal_documents')
      .values({
        enterprise_id: key.enterpriseId,
        pal_id: key.palId,
        version: key.version,
        position: d.position,
        file: d.file,
        digest: d.digest,
        document: d.document,
      })
      .execute();
  }
}

/** The documents (JSON of PalDocument) of one version, in the manifest's order. */
export async function findPalDocuments(
  db: Db,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('pal_documents')
    .select('document')
    .where('enterprise_id', '=', enterpriseId)
    .where('pal_id', '=', palId)
    .where('version', '=', version)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.document);
}

/** The bytes of one document of a version, or undefined. */
export async function findPalDocumentContent(
  db: Db,
  enterpriseId: string,
  palId: string,
  version: number,
  file: string,
): Promise<{ document: string; content: Uint8Array } | undefined> {
  return db
    .selectFrom('pal_documents as d')
    .innerJoin('document_contents as c', (j) =>
      j.onRef('c.enterprise_id', '=', 'd.enterprise_id').onRef('c.digest', '=', 'd.digest'),
    )
    .select(['d.document', 'c.content'])
    .where('d.enterprise_id', '=', enterpriseId)
    .where('d.pal_id', '=', palId)
    .where('d.version', '=', version)
    .where('d.file', '=', file)
    .executeTakeFirst();
}
