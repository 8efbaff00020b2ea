// Writes a completed PDF in a worker thread of its own (./completion-worker.ts) under a memory and
// a time limit: the event loop only hands the bytes over and takes the answer back.
import type { CompletionInput, CompletionResult } from './completed-pdf.js';
import { runDocumentWorker, type DocumentWorkerLimits } from './worker-thread.js';

/**
 * Limits for writing one completed PDF; docs/web-mode.md states them. The time stays inside the
 * outbox's lease (OUTBOX_LEASE_SECONDS, 60 s by default), so that no other node takes the job
 * while it runs.
 */
export const COMPLETION_LIMITS: DocumentWorkerLimits = { memoryMb: 1024, timeoutMs: 45_000 };

/** The completed PDF, or why it could not be written (never a fault of the file's reader). */
export async function writeCompletedPdf(
  input: CompletionInput,
  limits: DocumentWorkerLimits = COMPLETION_LIMITS,
): Promise<CompletionResult> {
  const outcome = await runDocumentWorker<CompletionResult>('completion-worker', input, limits);
  if (outcome.ok) return outcome.answer;
  return { ok: false, detail: `writing the completed PDF: ${outcome.tooCostly}` };
}
