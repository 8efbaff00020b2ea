// A promise settled from outside, in the shape of ES2024's Promise.withResolvers (the server's
// TypeScript library is ES2023): what group commit's batches, the log's syncs and the shared rate
// counts' batches wait on.

export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/**
 * A promise with its resolve and reject. Its rejection counts as handled: its waiters are told,
 * and one nobody waits on (a batch whose callers all rolled back) must not end the process.
 */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}
