import { getOrStart, LruMap } from '../../core/lru.js';

describe('LruMap', () => {
  test('drops the least recently used entry first; get marks an entry used', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect([...lru.values()]).toEqual([1, 3]);
    expect(lru.get('b')).toBeUndefined();
  });

  test('bounded by weight too', () => {
    const lru = new LruMap<string, number[]>(10, { weigh: (value) => value.length, maxWeight: 4 });
    lru.set('a', [1, 2]);
    lru.set('b', [1, 2]);
    lru.set('c', [1]);
    expect([...lru.values()]).toEqual([[1, 2], [1]]);
  });

  test('onEvict hears of entries dropped for the bounds, not of delete or a replaced value', () => {
    const evicted: string[] = [];
    const lru = new LruMap<string, number>(2, undefined, (value, key) => evicted.push(`${key}=${value}`));
    lru.set('a', 1);
    lru.set('a', 10);
    lru.set('b', 2);
    expect(lru.delete('b')).toBe(true);
    expect(lru.delete('b')).toBe(false);
    lru.set('c', 3);
    lru.set('d', 4);
    expect(evicted).toEqual(['a=10']);
    expect([...lru.values()]).toEqual([3, 4]);
  });

  test('delete frees its weight', () => {
    const lru = new LruMap<string, number[]>(10, { weigh: (value) => value.length, maxWeight: 3 });
    lru.set('a', [1, 2]);
    lru.delete('a');
    lru.set('b', [1, 2, 3]);
    expect([...lru.values()]).toEqual([[1, 2, 3]]);
  });
});

describe('LruMap.deleteWhere', () => {
  test('forgets the keys picked, hands over their values, frees their weight, keeps the order of the rest', () => {
    const lru = new LruMap<string, number>(10, { weigh: (v) => v, maxWeight: 10 });
    for (const [key, value] of [
      ['a/1', 4],
      ['b/1', 1],
      ['a/2', 4],
      ['b/2', 1],
    ] as const)
      lru.set(key, value);
    const dropped: number[] = [];
    lru.deleteWhere(
      (key) => key.startsWith('a/'),
      (value) => dropped.push(value),
    );
    expect(dropped).toEqual([4, 4]);
    expect([...lru.keys()]).toEqual(['b/1', 'b/2']);
    lru.set('c', 8); // fits only if a/*'s weight went with them
    expect([...lru.keys()]).toEqual(['b/1', 'b/2', 'c']);
  });
});

describe('getOrStart', () => {
  test('shares the promise of a key while it is kept', async () => {
    const cache = new LruMap<string, Promise<number>>(4);
    let starts = 0;
    const start = async () => ++starts;
    const [first, second] = [getOrStart(cache, 'k', start), getOrStart(cache, 'k', start)];
    expect(first).toBe(second);
    expect(await first).toBe(1);
    expect(await getOrStart(cache, 'k', start)).toBe(1);
  });

  test('forgets a promise that rejects: the next caller starts again', async () => {
    const cache = new LruMap<string, Promise<string>>(4);
    await expect(getOrStart(cache, 'k', () => Promise.reject(new Error('not yet')))).rejects.toThrow('not yet');
    expect(await getOrStart(cache, 'k', async () => 'now')).toBe('now');
  });
});
