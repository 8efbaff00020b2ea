// Completed documents (docs/web-mode.md): when a transaction becomes COMPLETED, each of its PDF
// documents is written once more with its values, its signatures and an evidence page. The commit
// that completes the transaction queues a job in the outbox (docs/events.md), so the PDF work
// never runs inside a run's commit, a crash loses nothing (the job is taken again when its lease
// ends), and the job may repeat harmlessly: a document that has its completed PDF is skipped.
// Until the job has written a document, it has no completed PDF: the session's download answers
// 404, `pal.documents.completed` null, and the digest is the deployed file's.
import { createHash } from 'node:crypto';
import type * as Wire from '@pal-workflow/types';
import { writeCompletedPdf } from '../documents/completion.js';
import { randomId } from './ids.js';
import {
  deleteCompletedDocuments,
  findCompletedContent,
  findCompletedDigests,
  findCompletedDocuments,
  insertCompletedDocument,
} from '../storage/completed-documents.js';
import { insertOutboxMessages } from '../storage/outbox-messages.js';
import { findTransactionRow } from '../storage/transactions.js';
import type { DomainContext } from './context.js';
import { getPalDocumentFile, getPalDocuments } from './pal-documents.js';
import { loadDocumentState } from './transaction-documents.js';

/** The completion job's payload in the outbox. */
interface CompletionJob {
  enterpriseId: string;
  transactionId: string;
}

/**
 * Queues the completion job; call it inside the commit that made the transaction COMPLETED. A
 * transaction completed again after a reopen loses the completed PDFs of its first completion:
 * its values and signatures may have changed since, and the job writes them anew.
 */
export async function queueCompletion(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
): Promise<void> {
  await deleteCompletedDocuments(ctx.db, transactionId);
  const job: CompletionJob = { enterpriseId, transactionId };
  await insertOutboxMessages(
    ctx.db,
    [{ id: `job_${randomId()}`, kind: 'completion', enterpriseId, payload: JSON.stringify(job) }],
    ctx.now().toISOString(),
  );
}

/** What one run of the job came to: done, or a document it can never write (no retry helps). */
export type CompletionOutcome = { ok: true; written: number } | { ok: false; error: string };

/**
 * Writes the completed PDF of each PDF document that has none yet. A fault of the database or the
 * worker rejects (the outbox retries); a file that cannot be written is a permanent outcome.
 */
export async function runCompletionJob(
  ctx: DomainContext,
  payload: string,
): Promise<CompletionOutcome> {
  const { enterpriseId, transactionId } = JSON.parse(payload) as CompletionJob;
  const row = await findTransactionRow(ctx.db, enterpriseId, transactionId);
  // Removed meanwhile, or not (or no longer) COMPLETED: nothing to write.
  if (!row || row.system_status !== 'COMPLETED') return { ok: true, written: 0 };
  const documents = await getPalDocuments(ctx, enterpriseId, row.pal_id, row.pal_version);
  const done = new Set(
    (await findCompletedDigests(ctx.db, enterpriseId, transactionId)).map((d) => d.file),
  );
  const states = await loadDocumentState(ctx.db, transactionId, documents);
  let written = 0;
  for (const [index, document] of documents.entries()) {
    if (document.contentType !== 'application/pdf' || done.has(document.file)) continue;
    const { content } = await getPalDocumentFile(
      ctx,
      enterpriseId,
      row.pal_id,
      row.pal_version,
      document.file,
    );
    const state = states[index]!;
    const result = await writeCompletedPdf({
      pdf: content,
      file: document.file,
      digest: document.digest,
      fields: document.fields,
      signatures: document.signatures,
      values: state.values,
      given: state.signatures,
      transactionId,
      completedAt: row.modified_date,
    });
    if (!result.ok) return { ok: false, error: `${document.file}: ${result.detail}` };
    const inserted = await insertCompletedDocument(ctx.db, {
      transactionId,
      file: document.file,
      enterpriseId,
      digest: createHash('sha256').update(result.pdf).digest('base64'),
      content: result.pdf,
      now: ctx.now().toISOString(),
    });
    if (inserted) written += 1;
  }
  if (written > 0) ctx.log.info({ transactionId, written }, 'completed documents written');
  return { ok: true, written };
}

/** File → the digest of its completed PDF, for the documents that have one. */
export async function completedDigests(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
): Promise<Map<string, string>> {
  const rows = await findCompletedDigests(ctx.db, enterpriseId, transactionId);
  return new Map(rows.map((r) => [r.file, r.digest]));
}

/** A document's completed PDF, or undefined before it is written (or for another enterprise). */
export function getCompletedDocument(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  file: string,
): Promise<Uint8Array | undefined> {
  return findCompletedContent(ctx.db, enterpriseId, transactionId, file);
}

/**
 * The completed PDF of the transaction's document at `index` (0-based, in the manifest's order)
 * with its file, or undefined: no such document, or none written yet.
 */
export async function getCompletedDocumentAt(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
  index: number,
): Promise<{ file: string; content: Uint8Array } | undefined> {
  const row = await findTransactionRow(ctx.db, enterpriseId, transactionId);
  if (!row) return undefined;
  const documents = await getPalDocuments(ctx, enterpriseId, row.pal_id, row.pal_version);
  const document = documents[index];
  if (!document) return undefined;
  const content = await findCompletedContent(ctx.db, enterpriseId, transactionId, document.file);
  return content ? { file: document.file, content } : undefined;
}

/** A download's file name: the document's, ASCII letters, digits, `.`, `-`, `_` only. */
export function completedFileName(file: string): string {
  const base = (file.split('/').pop() ?? 'document').replace(/\.pdf$/i, '');
  const safe = base
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 100);
  return `${safe || 'document'}-completed.pdf`;
}

/** A transaction's completed PDFs that are written: file → digest and bytes. */
export async function getCompletedDocuments(
  ctx: DomainContext,
  enterpriseId: string,
  transactionId: string,
): Promise<Map<string, { digest: string; content: Uint8Array }>> {
  const rows = await findCompletedDocuments(ctx.db, enterpriseId, transactionId);
  return new Map(rows.map((r) => [r.file, { digest: r.digest, content: r.content }]));
}

/** File → the completed PDF as base64, as `pal.documents.completed` answers. */
export function base64Contents(
  completed: ReadonlyMap<string, { content: Uint8Array }>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, { content }] of completed) out[file] = Buffer.from(content).toString('base64');
  return out;
}

/** The spec's Documents with each completed PDF's digest in place of the deployed file's. */
export function withCompletedDigests(
  documents: Wire.Document[],
  completed: ReadonlyMap<string, { digest: string }> | undefined,
): Wire.Document[] {
  if (!completed || completed.size === 0) return documents;
  return documents.map((d) => {
    const done = d.filename !== undefined ? completed.get(d.filename) : undefined;
    return done ? { ...d, digest: done.digest } : d;
  });
}
