import { loadSource, type LoadedSource, type LoadSourceOptions } from '../sources/index.js';

/**
 * ingest: a source → instances, databases and bad_input rejections. It runs once per run,
 * before the item stages, and is not cached: it is what computes the fingerprints that
 * every other cache key depends on.
 */
export const ingestStage = {
  kind: 'source' as const,
  name: 'ingest' as const,
  version: 1,
  run(sourcePath: string, options: LoadSourceOptions = {}): Promise<LoadedSource> {
    return loadSource(sourcePath, options);
  },
};
