// Reads a PDF in a worker thread of its own (./pdf-worker.ts) under a memory and a time limit, so
// that a crafted or damaged file becomes a deploy error, never a crash or a hang of the process.
import type { PdfReading } from './pdf-reader.js';
import type { PdfWorkerData } from './pdf-worker.js';
import { runDocumentWorker, type DocumentWorkerLimits } from './worker-thread.js';

export type PdfInspectionLimits = DocumentWorkerLimits;

/** Limits for the PDFs of a deployment; docs/pal-format.md states them. */
export const PDF_INSPECTION_LIMITS: PdfInspectionLimits = { memoryMb: 1024, timeoutMs: 60_000 };

export type PdfInspection = PdfReading | { ok: false; problem: 'too-costly'; detail: string };

/**
 * Reads one PDF. A file that makes the reader run out of memory or time is an answer, as a
 * damaged or encrypted one is; only a fault of the service itself (the worker cannot start)
 * rejects.
 */
export async function inspectPdf(
  bytes: Uint8Array,
  limits: PdfInspectionLimits = PDF_INSPECTION_LIMITS,
): Promise<PdfInspection> {
  const data: PdfWorkerData = { bytes };
  const outcome = await runDocumentWorker<PdfReading>('pdf-worker', data, limits);
  if (outcome.ok) return outcome.answer;
  return { ok: false, problem: 'too-costly', detail: `reading ${outcome.tooCostly}` };
}
