// Starting one of the document workers (./pdf-worker.ts, ./completion-worker.ts) under a memory
// limit. Built, a worker is JavaScript; from the sources (tests, tsx) it is TypeScript, and a
// small bootstrap registers tsx's loader in the thread first.
import { Worker } from 'node:worker_threads';

const fromSources = import.meta.url.endsWith('.ts');

/** `name` is the worker's module in this folder, without its extension (`pdf-worker`). */
export function startDocumentWorker(name: string, workerData: unknown, memoryMb: number): Worker {
  const url = new URL(`./${name}${fromSources ? '.ts' : '.js'}`, import.meta.url);
  const options = { workerData, resourceLimits: { maxOldGenerationSizeMb: memoryMb } };
  if (!fromSources) return new Worker(url, options);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

export interface DocumentWorkerLimits {
  /** Heap of the worker thread. */
  memoryMb: number;
  timeoutMs: number;
}

/** A worker's one answer, or why there is none: it needed more memory or time than allowed. */
export type WorkerOutcome<T> = { ok: true; answer: T } | { ok: false; tooCostly: string };

/**
 * Runs one document worker to its single answer, within the limits (the thread is ended when it
 * runs out of either). Only a fault of the service itself (the worker cannot start, or stops
 * without answering) rejects.
 */
export function runDocumentWorker<T>(
  name: string,
  workerData: unknown,
  limits: DocumentWorkerLimits,
): Promise<WorkerOutcome<T>> {
  return new Promise((resolve, reject) => {
    const worker = startDocumentWorker(name, workerData, limits.memoryMb);
    let settled = false;
    const finish = () => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      return true;
    };
    const settle = (outcome: WorkerOutcome<T>) => {
      if (finish()) resolve(outcome);
    };
    const timer = setTimeout(
      () => settle({ ok: false, tooCostly: `it took longer than ${limits.timeoutMs / 1000} s` }),
      limits.timeoutMs,
    );
    worker.on('message', (answer: T) => settle({ ok: true, answer }));
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        settle({ ok: false, tooCostly: `it needed more than ${limits.memoryMb} MB of memory` });
      } else if (finish()) {
        reject(error);
      }
    });
    worker.on('exit', () => {
      if (finish()) reject(new Error(`the document worker ${name} stopped without an answer`));
    });
  });
}
