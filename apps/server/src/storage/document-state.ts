// The transaction_field_values and transaction_signatures tables (migration 0022): what people and
// workflows gave a transaction's documents. Written only inside a successful run's commit.
import type { Db } from './database.js';
import { rowWasInserted } from './inserted.js';
import type { IsoDate, TransactionSignaturesTable, TransactionUploadsTable } from './schema.js';

export type SignatureRow = TransactionSignaturesTable;

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

/** Sets field values (insert or replace). */
export async function upsertFieldValues(
  db: Db,
  key: { enterpriseId: string; transactionId: string; now: IsoDate },
  values: readonly { file: string; fieldId: string; value: string }[],
): Promise<void> {
  for (const v of values) {
    await db
      .insertInto('transaction_field_values')
      .values({
        transaction_id: key.transactionId,
        file: v.file,
        field_id: v.fieldId,
        enterprise_id: key.enterpriseId,
        value: v.value,
        updated_at: key.now,
      })
      .onConflict((c) =>
        c
          .columns(['transaction_id', 'file', 'field_id'])
          .doUpdateSet({ value: v.value, updated_at: key.now }),
      )
      .execute();
  }
}

/** Removes given signatures of a transaction; the ones there were, with who had given them. */
export async function deleteSignatures(
  db: Db,
  transactionId: string,
  signatures: readonly { file: string; signatureId: string }[],
): Promise<Pick<SignatureRow, 'file' | 'signature_id' | 'sso_id' | 'kind' | 'record_time'>[]> {
  const removed = [];
  for (const s of signatures)
    removed.push(
      ...(await db
        .deleteFrom('transaction_signatures')
        .where('transaction_id', '=', transactionId)
        .where('file', '=', s.file)
        .where('signature_id', '=', s.signatureId)
        .returning(['file', 'signature_id', 'sso_id', 'kind', 'record_time'])
        .execute()),
    );
  return removed;
}

/**
 * Keeps signatures. A signature already given is never replaced: false when one of them was
 * (another run signed it first), and the caller's commit is rolled back.
 */
export async function insertSignatures(db: Db, rows: readonly SignatureRow[]): Promise<boolean> {
  for (const row of rows) {
    const inserted = await db
      .insertInto('transaction_signatures')
      .values(row)
      .onConflict((c) => c.columns(['transaction_id', 'file', 'signature_id']).doNothing())
      .executeTakeFirst();
    if (!rowWasInserted(inserted)) return false;
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
