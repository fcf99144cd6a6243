/**
 * A bounded map that drops the least recently used entry first. Bounded by entries, and
 * optionally by a total weight (`weigh` each value, keep at most `maxWeight` in all).
 * `onEvict` hears of each entry dropped to honour the bounds (not of `delete`, nor of a value
 * replaced by `set`), so that a cache of open resources can close what it lets go.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private totalWeight = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly weights?: { weigh: (value: V) => number; maxWeight: number },
    private readonly onEvict?: (value: V, key: K) => void,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Map iteration order is insertion order: re-inserting marks it most recent.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.weights?.weigh(value) ?? 0;
    this.entries.set(key, { value, weight });
    this.totalWeight += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.totalWeight <= (this.weights?.maxWeight ?? Infinity)) break;
      this.delete(oldest);
      this.onEvict?.(entry.value, oldest);
    }
  }

  /** The cached value, or `make()`'s, remembered. */
  getOrSet(key: K, make: () => V): V {
    let value = this.get(key);
    if (value === undefined) this.set(key, (value = make()));
    return value;
  }

  /** Forgets the key (a value that turned out bad); false if it was not there. */
  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    this.totalWeight -= entry.weight;
    return true;
  }

  /** Forgets every key `doomed` picks (what one database, now done with, left behind), handing each value to `dropped` (to close it). */
  deleteWhere(doomed: (key: K) => boolean, dropped?: (value: V) => void): void {
    for (const [key, entry] of [...this.entries]) {
      if (!doomed(key)) continue;
      this.delete(key);
      dropped?.(entry.value);
    }
  }

  /** The keys kept, least recently used first (without marking them used). */
  *keys(): IterableIterator<K> {
    yield* this.entries.keys();
  }

  /** The values kept, least recently used first (without marking them used). */
  *values(): IterableIterator<V> {
    for (const entry of this.entries.values()) yield entry.value;
  }
}

/**
 * The promise kept under `key`, or `start()`'s, kept while it does not reject: a failure is
 * not remembered (it may be passing: a run not registered yet, a file being replaced), so the
 * next caller starts again.
 */
export function getOrStart<K, V>(cache: LruMap<K, Promise<V>>, key: K, start: () => Promise<V>): Promise<V> {
  let promise = cache.get(key);
  if (!promise) {
    promise = start();
    cache.set(key, promise);
    promise.catch(() => cache.delete(key));
  }
  return promise;
}

/**
 * The text every `JSON.stringify([...first, ...more])` key starts with: a cache keyed by JSON
 * arrays forgets all keys of one database with `deleteWhere((key) => key.startsWith(prefix))`.
 */
export function jsonKeyPrefix(...first: unknown[]): string {
  return `${JSON.stringify(first).slice(0, -1)},`;
}
