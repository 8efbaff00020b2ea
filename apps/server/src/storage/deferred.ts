// A promise settled from outside, in the shape of ES2024's Promise.withResolvers (the server's
// TypeScript library is ES2023): what group commit's batches and the log's syncs wait on.

export interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * A promise with its resolve and reject. Its rejection counts as handled: its waiters are told,
 * and one nobody waits on (a batch whose callers all rolled back) must not end the process.
 */
export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}
