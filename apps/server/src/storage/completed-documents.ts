// The transaction_completed_documents table (migration 0024): a transaction's completed PDFs,
// written once each by the completion job (domain/completed-documents.ts).
import type { Db } from './database.js';
import { rowWasInserted } from './inserted.js';
import type { IsoDate } from './schema.js';

/** Keeps a completed PDF; false when the document had one already (a job repeated). */
export async function insertCompletedDocument(
  db: Db,
  row: {
    transactionId: string;
    file: string;
    enterpriseId: string;
    digest: string;
    content: Uint8Array;
    now: IsoDate;
  },
): Promise<boolean> {
  const result = await db
    .insertInto('transaction_completed_documents')
    .values({
      transaction_id: row.transactionId,
      file: row.file,
      enterprise_id: row.enterpriseId,
      digest: row.digest,
      content: row.content,
      created_at: row.now,
    })
    .onConflict((c) => c.columns(['transaction_id', 'file']).doNothing())
    .executeTakeFirst();
  return rowWasInserted(result);
}

/** The files of a transaction that have a completed PDF, with its digest. */
export async function findCompletedDigests(
  db: Db,
  enterpriseId: string,
  transactionId: string,
): Promise<{ file: string; digest: string }[]> {
  return db
    .selectFrom('transaction_completed_documents')
    .select(['file', 'digest'])
    .where('enterprise_id', '=', enterpriseId)
    .where('transaction_id', '=', transactionId)
    .execute();
}

/** One completed PDF's bytes, or undefined before it is written. */
export async function findCompletedContent(
  db: Db,
  enterpriseId: string,
  transactionId: string,
  file: string,
): Promise<Uint8Array | undefined> {
  const row = await db
    .selectFrom('transaction_completed_documents')
    .select('content')
    .where('enterprise_id', '=', enterpriseId)
    .where('transaction_id', '=', transactionId)
    .where('file', '=', file)
    .executeTakeFirst();
  return row ? new Uint8Array(row.content) : undefined;
}

/** Removes a transaction's completed PDFs (it is completed again, after a reopen). */
export async function deleteCompletedDocuments(db: Db, transactionId: string): Promise<void> {
  await db
    .deleteFrom('transaction_completed_documents')
    .where('transaction_id', '=', transactionId)
    .execute();
}

/** A transaction's completed PDFs, with their digests and bytes. */
export async function findCompletedDocuments(
  db: Db,
  enterpriseId: string,
  transactionId: string,
): Promise<{ file: string; digest: string; content: Uint8Array }[]> {
  const rows = await db
    .selectFrom('transaction_completed_documents')
    .select(['file', 'digest', 'content'])
    .where('enterprise_id', '=', enterpriseId)
    .where('transaction_id', '=', transactionId)
    .execute();
  return rows.map((r) => ({ ...r, content: new Uint8Array(r.content) }));
}
