import { dedupEndpoints, type DedupResult } from '../../generators/rest/dedup.js';
import type { SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { fallbackUnlessExecutorFault } from '../../runtime/sql/executor.js';
import type { DatabaseInfo } from '../../core/model.js';

/**
 * rest.dedup, the per-database barrier: once every instance of the database has its
 * endpoint, equivalent endpoints are merged (deterministically, canonical.ts), then the
 * de-duplication agent, if there is one, may merge near-duplicates it proves equivalent by
 * execution. Every merge carries its reason.
 */

export interface DedupAgent {
  /** Further merges of `result`'s endpoints; each one verified, never merely proposed. */
  refine(result: DedupResult, db: DatabaseInfo): Promise<DedupResult>;
}

export interface DatabaseDedup extends DedupResult {
  /** Endpoints before de-duplication (one per synthesized instance). */
  before: number;
}

export async function dedupDatabase(
  endpoints: readonly { instanceId: string; endpoint: SynthesizedEndpoint }[],
  db: DatabaseInfo,
  agent: DedupAgent | null,
): Promise<DatabaseDedup> {
  const merged = dedupEndpoints([...endpoints], db);
  // The agent can only add merges: if it fails, the deterministic result stands; but not
  // when our SQL executor failed under it (that result would be cached, the merges lost).
  const refined =
    agent && merged.canonical.length > 1
      ? await agent.refine(merged, db).catch(fallbackUnlessExecutorFault(merged))
      : merged;
  return { ...refined, before: endpoints.length };
}
