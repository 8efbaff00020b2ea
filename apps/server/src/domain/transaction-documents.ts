// A transaction's documents as they stand (docs/web-mode.md): the pal version's documents with the
// values and signatures kept with the transaction (domain/document-state.ts) laid over them. Read
// by the session page, the host API (`pal.documents.list()`) and the completed PDF.
import type * as Wire from '@pal-workflow/types';
import { FieldType } from '@pal-workflow/types';
import {
  deleteSignatures,
  findFieldValues,
  findSignatures,
  findUploads,
  insertSignatures,
  upsertFieldValues,
  upsertUploads,
  type SignatureRow,
} from '../storage/document-state.js';
import type { Db } from '../storage/database.js';
import { recordAudits } from './audit.js';
import type { DomainContext } from './context.js';
import type { StoredSignature, TransactionDocumentState } from './document-state.js';
import { ConflictError } from './errors.js';
import { emitEvents, type SignatureEventData } from './events.js';
import { toWireDocument, type PalDocument } from './pal-documents.js';

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

/** A field value to keep. */
export interface FieldWrite {
  file: string;
  fieldId: string;
  value: string;
}

/** An uploaded file as a workflow sees it (`input.uploads`, `pal.documents.uploads()`). */
export type UploadInfo = Wire.UploadInfo;

/** An upload to keep: its description and its bytes. */
export interface UploadWrite extends UploadInfo {
  content: Uint8Array;
}

/** What a session's form gives a run: kept with the run's other effects if it succeeds. */
export interface DocumentSubmission {
  values: FieldWrite[];
  signatures: StoredSignature[];
  uploads: UploadWrite[];
}

/** The uploads kept with a transaction, described (no content). */
export async function loadUploads(db: Db, transactionId: string): Promise<UploadInfo[]> {
  return (await findUploads(db, transactionId)).map((row) => ({
    name: row.name,
    filename: row.filename,
    contentType: row.content_type,
    size: Number(row.size),
    digest: row.digest,
    sso: row.sso_id,
    uploadedAt: row.uploaded_at,
  }));
}

/** The kept uploads with a submission's laid over them. */
export function uploadsWithSubmission(
  kept: readonly UploadInfo[],
  submission: DocumentSubmission | undefined,
): UploadInfo[] {
  const posted = (submission?.uploads ?? []).map(({ content: _content, ...info }) => info);
  return [...kept.filter((u) => !posted.some((p) => p.name === u.name)), ...posted];
}

/** The states with a submission laid over them: what they will be if the run succeeds. */
export function withSubmission(
  states: readonly TransactionDocumentState[],
  submission: DocumentSubmission | undefined,
): TransactionDocumentState[] {
  if (!submission) return [...states];
  return states.map((state) => ({
    file: state.file,
    values: {
      ...state.values,
      ...Object.fromEntries(
        submission.values.filter((v) => v.file === state.file).map((v) => [v.fieldId, v.value]),
      ),
    },
    signatures: [
      ...state.signatures,
      ...submission.signatures.filter((s) => s.file === state.file),
    ],
  }));
}

/**
 * The documents in the spec's Document JSON form (no content) as they stand: each field with its
 * current `value`, each signature given with its `recordTime` (0: not yet signed).
 */
export function toStateDocuments(
  documents: readonly PalDocument[],
  states: readonly TransactionDocumentState[],
): Wire.Document[] {
  return documents.map((document, i) => {
    const state = states[i]!;
    const { content: _content, ...wire } = toWireDocument(document);
    return {
      ...wire,
      fields: document.fields.map((f) =>
        f.id !== undefined && Object.hasOwn(state.values, f.id)
          ? { ...f, value: state.values[f.id] }
          : f,
      ),
      signatures: document.signatures.map((s) => {
        const given = state.signatures.find((g) => g.id === s.id);
        return given ? { ...s, recordTime: given.recordTime } : s;
      }),
    };
  });
}

/** A signature of a transaction's document, by its document's file and its id. */
export interface SignatureRef {
  file: string;
  signatureId: string;
}

/**
 * Keeps a successful run's document changes inside its commit (`dbTx`): the form's values, then the
 * values the workflow set (so the workflow's word is the last); the signatures the workflow took
 * back (`pal.documents.clearSignature`), each recorded in the audit log; then the form's
 * signatures but those, each recorded and sent as `document.signed`. A signature that another
 * run kept first fails the run (ConflictError): a signature is given once, until taken back.
 */
export async function keepDocumentChanges(
  dbTx: DomainContext,
  transaction: { enterpriseId: string; id: string; palId: string },
  submission: DocumentSubmission | undefined,
  workflow: { fields: readonly FieldWrite[]; clearedSignatures: readonly SignatureRef[] },
): Promise<void> {
  const values = [...(submission?.values ?? []), ...workflow.fields];
  const key = {
    enterpriseId: transaction.enterpriseId,
    transactionId: transaction.id,
    now: dbTx.now().toISOString(),
  };
  if (values.length > 0) await upsertFieldValues(dbTx.db, key, lastOfEach(values));
  const uploads = submission?.uploads ?? [];
  if (uploads.length > 0)
    await upsertUploads(
      dbTx.db,
      uploads.map((u) => ({
        transaction_id: transaction.id,
        name: u.name,
        enterprise_id: transaction.enterpriseId,
        filename: u.filename,
        content_type: u.contentType,
        size: u.size,
        digest: u.digest,
        content: u.content,
        sso_id: u.sso,
        uploaded_at: u.uploadedAt,
      })),
    );
  const cleared = workflow.clearedSignatures;
  if (cleared.length > 0) await takeBackSignatures(dbTx, transaction, cleared);
  const signatures = (submission?.signatures ?? []).filter(
    (s) => !cleared.some((c) => c.file === s.file && c.signatureId === s.id),
  );
  if (signatures.length === 0) return;
  const kept = await insertSignatures(
    dbTx.db,
    signatures.map((s) => ({
      transaction_id: transaction.id,
      file: s.file,
      signature_id: s.id,
      enterprise_id: transaction.enterpriseId,
      role: s.role,
      sso_id: s.sso,
      kind: s.kind,
      image: s.image !== undefined ? Buffer.from(s.image, 'base64') : null,
      text: s.text ?? null,
      record_time: s.recordTime,
      signer_name: s.evidence.name,
      signer_email: s.evidence.email,
      ip_address: s.evidence.ipAddress,
      user_agent: s.evidence.userAgent,
    })),
  );
  if (!kept) throw new ConflictError('a signature of this form was given meanwhile by another run');
  await recordAudits(
    dbTx,
    dbTx.db,
    signatures.map((s) => ({
      action: 'document.signed' as const,
      enterpriseId: transaction.enterpriseId,
      actor: s.sso ? { type: 'sso' as const, id: s.sso } : { type: 'anonymous' as const, id: null },
      target: { type: 'transaction', id: transaction.id },
      details: { file: s.file, signature: s.id, role: s.role, kind: s.kind },
      ip: s.evidence.ipAddress,
    })),
  );
  await emitEvents(
    dbTx,
    signatures.map((s) => ({
      enterpriseId: transaction.enterpriseId,
      type: 'document.signed' as const,
      data: signatureEvent(transaction, s.file, s.id, s.sso),
    })),
  );
}

/** Removes given signatures (pal.documents.clearSignature), each recorded and sent. */
async function takeBackSignatures(
  dbTx: DomainContext,
  transaction: { enterpriseId: string; id: string; palId: string },
  signatures: readonly SignatureRef[],
): Promise<void> {
  const removed = await deleteSignatures(dbTx.db, transaction.id, signatures);
  await recordAudits(
    dbTx,
    dbTx.db,
    removed.map((r) => ({
      action: 'document.signature_cleared' as const,
      enterpriseId: transaction.enterpriseId,
      target: { type: 'transaction', id: transaction.id },
      details: {
        file: r.file,
        signature: r.signature_id,
        signedBy: r.sso_id,
        kind: r.kind,
        signedAt: new Date(Number(r.record_time) * 1000).toISOString(),
      },
    })),
  );
  await emitEvents(
    dbTx,
    removed.map((r) => ({
      enterpriseId: transaction.enterpriseId,
      type: 'document.signature_cleared' as const,
      data: signatureEvent(transaction, r.file, r.signature_id, r.sso_id),
    })),
  );
}

function signatureEvent(
  transaction: { id: string; palId: string },
  file: string,
  signatureId: string,
  sso: string | null,
): SignatureEventData {
  return {
    transactionId: transaction.id,
    palId: transaction.palId,
    documentId: file,
    signatureId,
    sso,
  };
}

/** One write per field: the last one given. */
function lastOfEach(values: readonly FieldWrite[]): FieldWrite[] {
  const last = new Map<string, FieldWrite>();
  for (const v of values) last.set(`${v.file}\u0000${v.fieldId}`, v);
  return [...last.values()];
}
