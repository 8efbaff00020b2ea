// The document worker: reads one PDF (./pdf-reader.ts) and answers once. A thread of its own, so
// that pdf-lib's warnings about a damaged file stay out of the deploying process's output, and a
// file that needs more memory or time than it should ends this thread, not the process.
import { parentPort, workerData } from 'node:worker_threads';
import { readPdf, type PdfReading } from './pdf-reader.js';

export interface PdfWorkerData {
  bytes: Uint8Array;
}

const port = parentPort;
if (!port) throw new Error('documents/pdf-worker.ts runs as a worker thread only');

// pdf-lib reports objects it had to skip through console.warn; readPdf refuses such files itself.
console.warn = () => {};
console.log = () => {};

const reading: PdfReading = await readPdf((workerData as PdfWorkerData).bytes);
port.postMessage(reading);
