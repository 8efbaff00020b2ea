// A transaction's documents as they stand (docs/web-mode.md): the pal version's documents with the
// values and signatures kept with the transaction (domain/document-state.ts) laid over them. Read
// by the session page, the host API (`pal.documents.list()`) and the completed PDF.
import type * as Wire from '@pal-workflow/types';
import { FieldType } from '@pal-workflow/types';
import { findFieldValues, findSignatures, type SignatureRow } from '../storage/document-state.js';
import type { Db } from '../storage/database.js';
import type { StoredSignature, TransactionDocumentState } from './document-state.js';
import type { PalDocument } from './pal-documents.js';

/** A field's value before anyone set it: the manifest's, or what its control shows unset. */
export function firstValue(field: Wire.Field): string {
  if (field.value !== undefined) return field.value;
  if (field.type === FieldType.CHECKBOXCHECKED) return 'true';
  if (field.type === FieldType.CHECKBOX) return 'false';
  return '';
}

/** The documents' first values, with nothing kept yet (console sessions, a new transaction). */
export function initialDocumentState(
  documents: readonly PalDocument[],
): TransactionDocumentState[] {
  return documents.map((d) => ({
    file: d.file,
    values: Object.fromEntries(
      d.fields.filter((f) => f.id !== undefined).map((f) => [f.id!, firstValue(f)]),
    ),
    signatures: [],
  }));
}

export function toStoredSignature(row: SignatureRow): StoredSignature {
  return {
    id: row.signature_id,
    file: row.file,
    role: row.role,
    sso: row.sso_id,
    kind: row.kind,
    ...(row.image !== null ? { image: Buffer.from(row.image).toString('base64') } : {}),
    ...(row.text !== null ? { text: row.text } : {}),
    recordTime: Number(row.record_time),
    evidence: {
      name: row.signer_name,
      email: row.signer_email,
      ipAddress: row.ip_address,
      userAgent: row.user_agent,
    },
  };
}

/**
 * The transaction's documents as they stand: the first values overlaid with those kept, and the
 * signatures given so far. Values and signatures of a document or field the version no longer
 * names are left out.
 */
export async function loadDocumentState(
  db: Db,
  transactionId: string,
  documents: readonly PalDocument[],
): Promise<TransactionDocumentState[]> {
  const states = initialDocumentState(documents);
  if (states.length === 0) return states;
  const [values, signatures] = await Promise.all([
    findFieldValues(db, transactionId),
    findSignatures(db, transactionId),
  ]);
  const byFile = new Map(states.map((s) => [s.file, s]));
  for (const v of values) {
    const state = byFile.get(v.file);
    if (state && Object.hasOwn(state.values, v.fieldId)) state.values[v.fieldId] = v.value;
  }
  for (const row of signatures) byFile.get(row.file)?.signatures.push(toStoredSignature(row));
  return states;
}
