// The transaction_field_values and transaction_signatures tables (migration 0022): what people and
// workflows gave a transaction's documents. Written only inside a successful run's commit.
import type { Db } from './database.js';
import { inParts, insertedRows } from './inserted.js';
import type { IsoDate, TransactionSignaturesTable, TransactionUploadsTable } from './schema.js';

export type SignatureRow = TransactionSignaturesTable;

/** One key for a field or signature of a document (the two parts may hold any character). */
const documentKey = (file: string, id: string) => JSON.stringify([file, id]);

/** The values set on a transaction's documents: file, field id, value. */
export async function findFieldValues(
  db: Db,
  transactionId: string,
): Promise<{ file: string; fieldId: string; value: string }[]> {
  return db
    .selectFrom('transaction_field_values')
    .select(['file', 'field_id as fieldId', 'value'])
    .where('transaction_id', '=', transactionId)
    .execute();
}

/** The signatures given on a transaction's documents, oldest first. */
export async function findSignatures(db: Db, transactionId: string): Promise<SignatureRow[]> {
  return db
    .selectFrom('transaction_signatures')
    .selectAll()
    .where('transaction_id', '=', transactionId)
    .orderBy('record_time')
    .orderBy('file')
    .orderBy('signature_id')
    .execute();
}

/** Sets field values (insert or replace), one statement for up to ROWS_PER_STATEMENT of them. */
export async function upsertFieldValues(
  db: Db,
  key: { enterpriseId: string; transactionId: string; now: IsoDate },
  values: readonly { file: string; fieldId: string; value: string }[],
): Promise<void> {
  // The last value of a file and field counts, as one statement after the other would have it:
  // PostgreSQL's ON CONFLICT DO UPDATE refuses to touch one row twice in a statement.
  const last = new Map(values.map((v) => [documentKey(v.file, v.fieldId), v]));
  for (const part of inParts([...last.values()]))
    await db
      .insertInto('transaction_field_values')
      .values(
        part.map((v) => ({
          transaction_id: key.transactionId,
          file: v.file,
          field_id: v.fieldId,
          enterprise_id: key.enterpriseId,
          value: v.value,
          updated_at: key.now,
        })),
      )
      .onConflict((c) =>
        c.columns(['transaction_id', 'file', 'field_id']).doUpdateSet((eb) => ({
          value: eb.ref('excluded.value'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
}

/**
 * Removes given signatures of a transaction; the ones there were, with who had given them, in
 * the order asked.
 */
export async function deleteSignatures(
  db: Db,
  transactionId: string,
  signatures: readonly { file: string; signatureId: string }[],
): Promise<Pick<SignatureRow, 'file' | 'signature_id' | 'sso_id' | 'kind' | 'record_time'>[]> {
  const removed = [];
  for (const part of inParts(signatures))
    removed.push(
      ...(await db
        .deleteFrom('transaction_signatures')
        .where('transaction_id', '=', transactionId)
        .where((eb) =>
          eb.or(
            part.map((s) =>
              eb.and([eb('file', '=', s.file), eb('signature_id', '=', s.signatureId)]),
            ),
          ),
        )
        .returning(['file', 'signature_id', 'sso_id', 'kind', 'record_time'])
        .execute()),
    );
  const order = new Map(signatures.map((s, i) => [documentKey(s.file, s.signatureId), i]));
  const place = (r: { file: string; signature_id: string }) =>
    order.get(documentKey(r.file, r.signature_id))!;
  return removed.sort((a, b) => place(a) - place(b));
}

/**
 * Keeps signatures. A signature already given is never replaced: false when one of them was
 * (another run signed it first), and the caller's commit is rolled back.
 */
export async function insertSignatures(db: Db, rows: readonly SignatureRow[]): Promise<boolean> {
  for (const part of inParts(rows)) {
    const inserted = await db
      .insertInto('transaction_signatures')
      .values([...part])
      .onConflict((c) => c.columns(['transaction_id', 'file', 'signature_id']).doNothing())
      .executeTakeFirst();
    if (insertedRows(inserted) < part.length) return false;
  }
  return true;
}

export type UploadRow = TransactionUploadsTable;

/** The uploads kept with a transaction, without their content. */
export async function findUploads(
  db: Db,
  transactionId: string,
): Promise<Omit<UploadRow, 'content'>[]> {
  return db
    .selectFrom('transaction_uploads')
    .select([
      'transaction_id',
      'name',
      'enterprise_id',
      'filename',
      'content_type',
      'size',
      'digest',
      'sso_id',
      'uploaded_at',
    ])
    .where('transaction_id', '=', transactionId)
    .orderBy('name')
    .execute();
}

/** One upload kept with a transaction, with its content. */
export async function findUpload(
  db: Db,
  transactionId: string,
  name: string,
): Promise<Pick<UploadRow, 'filename' | 'content_type' | 'content'> | undefined> {
  return db
    .selectFrom('transaction_uploads')
    .select(['filename', 'content_type', 'content'])
    .where('transaction_id', '=', transactionId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Keeps uploads: a newer file of the same name replaces the one before. */
export async function upsertUploads(db: Db, rows: readonly UploadRow[]): Promise<void> {
  for (const row of rows) {
    const { transaction_id: _t, name: _n, ...rest } = row;
    await db
      .insertInto('transaction_uploads')
      .values(row)
      .onConflict((c) => c.columns(['transaction_id', 'name']).doUpdateSet(rest))
      .execute();
  }
}
