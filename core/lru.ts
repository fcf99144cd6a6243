/**
 * A bounded map that drops the least recently used entry first. Bounded by entries, and
 * optionally by a total weight (`weigh` each value, keep at most `maxWeight` in all).
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private totalWeight = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly weights?: { weigh: (value: V) => number; maxWeight: number },
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
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.totalWeight <= (this.weights?.maxWeight ?? Infinity)) break;
      this.delete(oldest);
    }
  }

  /** The cached value, or `make()`'s, remembered. */
  getOrSet(key: K, make: () => V): V {
    let value = this.get(key);
    if (value === undefined) this.set(key, (value = make()));
    return value;
  }

  private delete(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.totalWeight -= entry.weight;
  }
}
