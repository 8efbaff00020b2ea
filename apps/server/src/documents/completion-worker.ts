// The completion worker: writes one completed PDF (./completed-pdf.ts) and answers once. A thread
// of its own, so that filling and saving a large PDF never blocks the event loop, and a file that
// needs more memory or time than it should ends this thread, not the process.
import { parentPort, workerData } from 'node:worker_threads';
import { composeCompletedPdf, type CompletionInput } from './completed-pdf.js';

const port = parentPort;
if (!port) throw new Error('documents/completion-worker.ts runs as a worker thread only');

// pdf-lib reports objects it had to skip through console.warn.
console.warn = () => {};
console.log = () => {};

const result = await composeCompletedPdf(workerData as CompletionInput);
port.postMessage(result, result.ok ? [result.pdf.buffer as ArrayBuffer] : []);
