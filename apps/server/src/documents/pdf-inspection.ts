// Reads a PDF in a worker thread of its own (./pdf-worker.ts) under a memory and a time limit, so
// that a crafted or damaged file becomes a deploy error, never a crash or a hang of the process.
import { Worker } from 'node:worker_threads';
import type { PdfReading } from './pdf-reader.js';
import type { PdfWorkerData } from './pdf-worker.js';

export interface PdfInspectionLimits {
  /** Heap of the worker that parses one PDF. */
  memoryMb: number;
  timeoutMs: number;
}

/** Limits for the PDFs of a deployment; docs/pal-format.md states them. */
export const PDF_INSPECTION_LIMITS: PdfInspectionLimits = { memoryMb: 1024, timeoutMs: 60_000 };

export type PdfInspection = PdfReading | { ok: false; problem: 'too-costly'; detail: string };

// Built, the worker is JavaScript. From the sources (tests, tsx) it is TypeScript: a small
// bootstrap registers tsx's loader in the thread first.
const fromSources = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(fromSources ? './pdf-worker.ts' : './pdf-worker.js', import.meta.url);

function startWorker(data: PdfWorkerData, limits: PdfInspectionLimits): Worker {
  const options = {
    workerData: data,
    resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
  };
  if (!fromSources) return new Worker(WORKER_URL, options);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(WORKER_URL.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * Reads one PDF. A file that makes the reader run out of memory or time is an answer, as a
 * damaged or encrypted one is; only a fault of the service itself (the worker cannot start)
 * rejects.
 */
export function inspectPdf(
  bytes: Uint8Array,
  limits: PdfInspectionLimits = PDF_INSPECTION_LIMITS,
): Promise<PdfInspection> {
  return new Promise((resolve, reject) => {
    const worker = startWorker({ bytes }, limits);
    let settled = false;
    const finish = () => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      return true;
    };
    const settle = (answer: PdfInspection) => {
      if (finish()) resolve(answer);
    };
    const timer = setTimeout(
      () =>
        settle({
          ok: false,
          problem: 'too-costly',
          detail: `reading it took longer than ${limits.timeoutMs / 1000} s`,
        }),
      limits.timeoutMs,
    );
    worker.on('message', (reading: PdfReading) => settle(reading));
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        settle({
          ok: false,
          problem: 'too-costly',
          detail: `reading it needed more than ${limits.memoryMb} MB of memory`,
        });
      } else if (finish()) {
        // readPdf answers every file; an error here is the service's own.
        reject(error);
      }
    });
    worker.on('exit', () => {
      if (finish()) reject(new Error('the PDF reader stopped without an answer'));
    });
  });
}
