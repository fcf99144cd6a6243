/** `build` once per key object (what it builds is never changed once built), kept as long as the object lives. */
export function perObject<K extends object, V>(build: (key: K) => V): (key: K) => V {
  const cache = new WeakMap<K, V>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) cache.set(key, (value = build(key)));
    return value;
  };
}
