import type { DedupMerge } from '../../generators/rest/dedup.js';
import { indistinctEndpoints } from '../../generators/rest/distinctness.js';
import { lazy } from '../../core/lazy.js';
import type { EndpointSpec, RestCall, SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { fallbackUnlessExecutorFault } from '../../runtime/sql/executor.js';
import { accept } from '../../core/outcome.js';
import type { DatabaseStage, RestStageContext } from '../stage.js';
import { dbCacheKey } from './db-key.js';

const deduplication = lazy(() => import('../../generators/rest/dedup.js'));

/**
 * rest.dedup, the per-database barrier: once every instance of the database has its
 * endpoint, equivalent endpoints are merged (deterministically, canonical.ts) and the kept
 * ones told apart (disambiguate.ts), then the de-duplication agent, if there is one, may merge near-duplicates it proves equivalent by
 * execution. Every merge carries its reason.
 */

export interface DedupInput {
  /** The database's synthesized instances, in instance order; `synthesis` is the rest.synthesize output (it counts by its key). */
  synthesized: readonly { instanceId: string; synthesis: { endpoint: SynthesizedEndpoint } }[];
}

/** A database's endpoints after de-duplication, as plain JSON (it is cached). */
export interface DatabaseDedup {
  canonical: EndpointSpec[];
  /** Instance id → its call of a canonical endpoint. */
  calls: [string, RestCall][];
  merges: DedupMerge[];
  /** Endpoints a caller could not tell from another (distinctness.ts), with why: their instances are refused. */
  indistinct: [string, string][];
  /** Endpoints before de-duplication (one per synthesized instance). */
  before: number;
}

export const dedupStage: DatabaseStage<DedupInput, DatabaseDedup, RestStageContext> = {
  kind: 'barrier',
  name: 'rest.dedup',
  // 3: the kept endpoints are told apart (generators/rest/disambiguate.ts); 4: enums cover every merged call, the indistinct gate.
  version: 4,
  cacheKey: ({ synthesized }, ctx) => ({
    db: dbCacheKey(ctx.db),
    entries: synthesized.map((e) => [e.instanceId, e.synthesis]),
    agent: ctx.services.dedupFingerprint,
  }),
  async run({ synthesized }, { db, services }) {
    const { dedupEndpoints, enumsCoveringCalls } = await deduplication();
    const merged = dedupEndpoints(
      synthesized.map((e) => ({ instanceId: e.instanceId, endpoint: e.synthesis.endpoint })),
      db,
    );
    // The agent can only add merges: if it fails, the deterministic result stands; but not
    // when our SQL executor failed under it (that result would be cached, the merges lost).
    const refined =
      services.dedupAgent && merged.canonical.length > 1
        ? await services.dedupAgent.refine(merged, db).catch(fallbackUnlessExecutorFault(merged))
        : merged;
    const canonical = enumsCoveringCalls(refined.canonical, refined.calls);
    return accept({
      canonical,
      calls: [...refined.calls],
      merges: refined.merges,
      indistinct: [...indistinctEndpoints(canonical)],
      before: synthesized.length,
    });
  },
};

/** Why the endpoint an instance calls after dedup is refused as indistinct, or null. */
export function indistinctReason(dedup: DatabaseDedup, operationId: string): string | null {
  return dedup.indistinct.find(([id]) => id === operationId)?.[1] ?? null;
}

/** The served endpoint and call of an instance after dedup (`calls`: the dedup's, as a map). */
export function servedEndpoint(
  dedup: DatabaseDedup,
  calls: ReadonlyMap<string, RestCall>,
  instanceId: string,
): SynthesizedEndpoint {
  const call = calls.get(instanceId)!;
  const spec = dedup.canonical.find((s) => s.operationId === call.name)!;
  return { spec, call };
}
