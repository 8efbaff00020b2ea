// A read-through cache for data that is read far more often than written (pals). Exact, not
// time-based: every entry is dropped as soon as the storage's change stamp moves, which happens on
// any write by this process or any other (storage/storage-dialect.ts `changeStamp`). Cached values are
// shared between requests: they are frozen all the way down (a change throws a TypeError), which
// also lets the routes send the bytes they were first written as (the skeleton's deepFreeze).
import { deepFreeze } from '@pal-workflow/server-skeleton';

/** Entries kept at the most; then the cache starts afresh. */
const MAX_ENTRIES = 10_000;

export class ReadCache {
  private readonly entries = new Map<string, unknown>();
  private stamp: string | undefined;

  constructor(private readonly currentStamp: () => string | undefined) {}

  /**
   * The value of `key`, loaded through `db` when not cached. Read inside a database transaction
   * (`db.isTransaction`), which may see its own uncommitted writes and may roll back, nothing is
   * cached or served from the cache: others must not see it meanwhile.
   */
  async get<T>(
    key: string,
    db: { readonly isTransaction: boolean },
    load: () => Promise<T>,
  ): Promise<T> {
    if (db.isTransaction) return load();
    const stamp = this.currentStamp();
    if (stamp === undefined) return load();
    if (stamp !== this.stamp) {
      this.entries.clear();
      this.stamp = stamp;
    }
    if (this.entries.has(key)) return this.entries.get(key) as T;
    const value = deepFreeze(await load());
    // Kept only when nothing changed while it loaded.
    if (this.currentStamp() === stamp) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}
