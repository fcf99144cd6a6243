/**
 * A module loaded on first use, once. Stages import their implementation this way, so a
 * run served from the cache never loads the heavy modules (node-sql-parser, ajv, the SLOT
 * runtime's compiler and executor).
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}
