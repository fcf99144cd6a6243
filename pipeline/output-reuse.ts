import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256 } from '../core/hash.js';
import type { Manifest } from './manifest.js';
import type { DeterministicStats } from './stats.js';
import type { OutcomeStore } from './store/outcome-store.js';
import { cacheKeyOf } from './store/run-store.js';

/**
 * The run-level cache: what a whole run wrote (its stats and manifest), keyed by everything
 * its outputs depend on — the config that matters, the ingest result and every item's
 * planned result key (which chain back to questions, databases and code). A rerun whose key
 * is known and whose files are still on disk, unchanged, rewrites only stats.json and the
 * manifest: it neither loads item results nor renders a file. Like make, but by content.
 */

const STAGE = 'run.outputs';
const VERSION = 1;

export interface RunOutputs {
  /** Stats without `timing` (that is of the run that writes them). */
  stats: DeterministicStats;
  manifest: Manifest;
}

export function runOutputsKey(parts: unknown, code: string): string {
  return cacheKeyOf(STAGE, VERSION, parts, undefined, code);
}

export function rememberRunOutputs(store: OutcomeStore, key: string, outputs: RunOutputs): void {
  store.put(key, STAGE, JSON.stringify(outputs));
}

/** The outputs recorded under `key`, if every file they list is in `outDir` with its recorded content. */
export async function reusableRunOutputs(
  store: OutcomeStore,
  key: string,
  outDir: string,
): Promise<RunOutputs | undefined> {
  const record = (await store.getMany<RunOutputs>([key])).get(key);
  if (!record) return undefined;
  for (const file of record.manifest.files) {
    const content = await readFile(path.join(outDir, ...file.path.split('/'))).catch(() => undefined);
    if (!content || content.length !== file.bytes || sha256(content) !== file.sha256) return undefined;
  }
  return record;
}
