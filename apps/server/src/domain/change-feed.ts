// Tells interested parties that something changed, by key: the domain announces, caches outside
// it (the HTTP credential cache) listen. Listeners run synchronously and must not throw.
export class ChangeFeed<Key> {
  private readonly listeners = new Set<(key: Key) => void>();

  /** Calls `listener` with every key published from now on; returns the unsubscribe function. */
  subscribe(listener: (key: Key) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(key: Key): void {
    for (const listener of this.listeners) listener(key);
  }
}
