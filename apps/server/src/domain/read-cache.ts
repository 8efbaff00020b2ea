// A read-through cache for data that is read far more often than written (pals). Exact, not
// time-based: every entry is dropped as soon as the storage's change stamp moves, which happens on
// any write by this process or any other (storage/storage-dialect.ts `changeStamp`). Cached values are
// shared between requests: they are frozen all the way down (a change throws a TypeError), which
// also lets the routes send the bytes they were first written as (the skeleton's deepFreeze).
import { deepFreeze } from '@pal-workflow/server-skeleton';

/** Entries kept at the most; then the cache starts afresh. */
const MAX_ENTRIES = 10_000;
/**
 * What the entries that say their size (`weigh`) may hold in all, estimated in bytes; then the
 * cache starts afresh. A pal's manifest may be 4 MiB of JSON: ten thousand such would not fit.
 */
export const MAX_CACHED_BYTES = 32 * 1024 * 1024;

export class ReadCache {
  private readonly entries = new Map<string, unknown>();
  private stamp: string | undefined;
  private bytes = 0;

  constructor(private readonly currentStamp: () => string | undefined) {}

  /**
   * The value of `key`, loaded through `db` when not cached. Read inside a database transaction
   * (`db.isTransaction`), which may see its own uncommitted writes and may roll back, nothing is
   * cached or served from the cache: others must not see it meanwhile. `weigh`, for values that
   * may be large: their estimated size in bytes, asked once they are loaded.
   */
  async get<T>(
    key: string,
    db: { readonly isTransaction: boolean },
    load: () => Promise<T>,
    weigh?: (value: T) => number,
  ): Promise<T> {
    if (db.isTransaction) return load();
    const stamp = this.currentStamp();
    if (stamp === undefined) return load();
    if (stamp !== this.stamp) {
      this.clear();
      this.stamp = stamp;
    }
    const cached = this.entries.get(key);
    if (cached !== undefined || this.entries.has(key)) return cached as T;
    const value = deepFreeze(await load());
    // Kept only when nothing changed while it loaded, and when it fits at all.
    const bytes = weigh ? weigh(value) : 0;
    if (this.currentStamp() === stamp && bytes <= MAX_CACHED_BYTES) {
      if (this.entries.size >= MAX_ENTRIES || this.bytes + bytes > MAX_CACHED_BYTES) this.clear();
      this.entries.set(key, value);
      this.bytes += bytes;
    }
    return value;
  }

  /**
   * The value of `key` if it is cached and nothing changed since, without loading it. Served
   * whatever `db` the caller holds: for a caller whose transaction does not write what the value
   * is read from.
   */
  peek<T>(key: string): T | undefined {
    const stamp = this.currentStamp();
    if (stamp === undefined || stamp !== this.stamp) return undefined;
    return this.entries.get(key) as T | undefined;
  }

  private clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
