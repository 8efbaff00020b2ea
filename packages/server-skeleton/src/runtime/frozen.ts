/**
 * Values that can never change: frozen all the way down by `deepFreeze`. The routes keep the
 * bytes such a value was written as (per format and root) and send them again, instead of
 * serialising it on every request; a handler that hands out shared values (a read cache) freezes
 * them, so that the bytes cannot go stale: a later change to the value throws instead.
 */
const immutable = new WeakSet<object>();

/**
 * Freezes `value` and everything it holds (plain objects and arrays), and marks each as
 * immutable. A value holding anything whose contents a freeze does not fix (a Date, a Map, a
 * typed array, a class instance) is still frozen where it can be, but not marked: its bytes are
 * written afresh each time. Returns `value`.
 */
export function deepFreeze<T>(value: T): T {
  freeze(value);
  return value;
}

/** True when `value` was frozen whole by deepFreeze. */
export function isImmutable(value: object): boolean {
  return immutable.has(value);
}

/** Freezes what it can; true when `value` is now immutable all the way down. */
function freeze(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'function';
  if (immutable.has(value)) return true;
  const prototype = Object.getPrototypeOf(value) as unknown;
  const plain = Array.isArray(value) || prototype === Object.prototype || prototype === null;
  if (!plain) return false;
  let whole = true;
  for (const key of Reflect.ownKeys(value))
    if (!freeze((value as Record<PropertyKey, unknown>)[key])) whole = false;
  Object.freeze(value);
  if (whole) immutable.add(value);
  return whole;
}
