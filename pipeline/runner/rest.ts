import pLimit from 'p-limit';
import type { SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import type { RestServer } from '../../runtime/rest/server.js';
import { groupBy } from '../../core/group.js';
import { lazy } from '../../core/lazy.js';
import type { DatabaseInfo, GoldResult, Instance } from '../../core/model.js';
import { packageVersion } from '../../core/package-root.js';
import { ProgressTracker, type ProgressListener } from '../progress.js';
import type { AcceptedRestSample, RejectedSample, RestResult } from '../samples.js';
import type { DatabaseDedup } from '../stages/rest-dedup.js';
import type { SynthesisRecord } from '../stages/rest-synthesize.js';
import { restSynthesisKey } from './rest-keys.js';
import {
  dedupFor,
  finalCheck,
  finalKeyOf,
  goldOf,
  servedEndpoint,
  synthesisBatches,
  synthesizeBatch,
  type FinalRecord,
  type RestPhaseContext,
} from './rest-phases.js';
import { INTERNAL_ERROR, metricsOf, NOT_COMPUTED, timedInto, type StageMetrics } from './stage-runner.js';

/**
 * The REST runner (DESIGN.md: gold → rest.synthesize → rest.dedup → execute → verify):
 *
 * 1. gold per instance (shared with SLOT/SEL through the stage cache);
 * 2. rest.synthesize per database, with the verify-and-retry loop (stages/rest-synthesize.ts);
 *    each instance's record is cached under a key planned from the instance alone;
 * 3. rest.dedup per database, once all its instances are synthesized (the barrier);
 * 4. the live server on an ephemeral loopback port, started only if some call is not in the
 *    cache; each instance's call executed over HTTP and verified; results cached by the
 *    endpoint, the call and the gold.
 *
 * Every instance ends in exactly one RestResult.
 */

export interface RestRunOptions extends RestPhaseContext {
  databases: readonly DatabaseInfo[];
  instances: readonly Instance[];
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /**
   * false: compute nothing, only assemble what the store holds (a queue driver after its
   * workers are done); a missing record is an internal error of that instance.
   */
  computeMisses?: boolean;
}

export interface RestDedupStats {
  /** Per database: endpoints synthesized, after dedup, and published (called by a verified sample). */
  byDb: Record<string, { before: number; after: number; published: number }>;
  merges: { db: string; kept: string; merged: string; reason: string }[];
}

export interface RestRunResult {
  results: Map<Instance, RestResult>;
  dedup: RestDedupStats;
  metrics: Map<string, StageMetrics>;
  aborted: boolean;
}

// Fastify and the docs UI load only when some call is not in the cache.
const restServer = lazy(() => import('../../runtime/rest/server.js'));

export async function runRest(options: RestRunOptions): Promise<RestRunResult> {
  const { config, store } = options;
  const computeMisses = options.computeMisses ?? true;
  const databases = new Map(options.databases.map((db) => [db.dbId, db]));
  const metrics = new Map<string, StageMetrics>();
  const timed = timedInto(metrics);
  const count = options.instances.length;
  const progress = ProgressTracker.forRest(count, options.databases.length, options.onProgress);
  const results = new Map<Instance, RestResult>();
  const reject = (instance: Instance, stage: RejectedSample['stage'], category: string, message: string) =>
    results.set(instance, { ok: false, stage, category, message });
  const notComputed = (instance: Instance, stage: RejectedSample['stage']) =>
    reject(instance, stage, INTERNAL_ERROR, NOT_COMPUTED);
  const skipped = (n: number) =>
    ['rest.synthesize', 'rest.execute', 'rest.verify'].forEach((stage) => progress.done(stage, n));
  const open = options.instances;

  // 1. gold.
  const limit = pLimit(config.concurrency);
  const golds = new Map<Instance, GoldResult>();
  await Promise.all(
    open.map((instance) =>
      limit(async () => {
        // Interrupted: the items in flight finish, the others are left for the rerun.
        if (options.signal?.aborted) return;
        const db = databases.get(instance.dbId);
        if (!db) return void reject(instance, 'ingest', 'bad_input', `unknown database ${instance.dbId}`);
        const gold = await goldOf(instance, db, options);
        if (gold.ok) golds.set(instance, gold.value);
        else reject(instance, 'gold', gold.category, gold.message);
      }),
    ),
  );
  skipped(open.length - golds.size);

  // 2. rest.synthesize: the cached records, then the batches of the others.
  const synthKeys = new Map<Instance, string>();
  for (const instance of open) {
    const db = databases.get(instance.dbId);
    if (db) synthKeys.set(instance, restSynthesisKey(instance, db, options));
  }
  const cachedSynth = store
    ? await store.getMany<SynthesisRecord>([...synthKeys.values()])
    : new Map<string, SynthesisRecord>();
  const synthesized = new Map<Instance, SynthesisRecord>();
  for (const [instance, key] of synthKeys) {
    const hit = golds.has(instance) && cachedSynth.get(key);
    if (hit) synthesized.set(instance, hit);
  }
  progress.done('rest.synthesize', synthesized.size);
  const batches = synthesisBatches(
    [...synthKeys.keys()],
    (instance) => !cachedSynth.has(synthKeys.get(instance)!),
    config.rest.batchSize,
  );
  const batchRuns = batches.reduce((n, batch) => n + batch.filter((i) => golds.has(i)).length, 0);
  await timed(
    'rest.synthesize',
    () =>
      Promise.all(
        batches.map((batch) =>
          limit(async () => {
            const ready = batch.filter((instance) => golds.has(instance));
            if (options.signal?.aborted || ready.length === 0) return;
            if (!computeMisses) return void ready.forEach((instance) => notComputed(instance, 'rest.synthesize'));
            const items = ready.map((instance) => ({ instance, gold: golds.get(instance)! }));
            const keys = ready.map((instance) => synthKeys.get(instance)!);
            const records = await synthesizeBatch(items, keys, databases.get(ready[0].dbId)!, options, (n) =>
              progress.done('rest.synthesize', n),
            );
            ready.forEach((instance, i) => synthesized.set(instance, records[i]));
            await store?.commit();
          }),
        ),
      ),
    batchRuns,
    synthesized.size,
  );
  if (options.signal?.aborted) return { results, dedup: { byDb: {}, merges: [] }, metrics, aborted: true };
  for (const [instance, record] of synthesized)
    if (!record.ok) reject(instance, 'rest.synthesize', record.category, record.message);

  // 3. rest.dedup, per database.
  const dedups = new Map<string, DatabaseDedup>();
  const instancesByDb = groupBy(open, (instance) => instance.dbId);
  await timed('rest.dedup', async () => {
    for (const db of [...options.databases].sort((a, b) => (a.dbId < b.dbId ? -1 : 1))) {
      const entries = (instancesByDb.get(db.dbId) ?? []).flatMap((instance) => {
        const record = synthesized.get(instance);
        return record?.ok
          ? [{ instanceId: instance.id, synthesisKey: synthKeys.get(instance)!, endpoint: record.endpoint }]
          : [];
      });
      dedups.set(db.dbId, (await dedupFor(db, entries, options)).dedup);
      progress.done('rest.dedup');
    }
  });

  // 4. execute over HTTP, verify.
  let server: Promise<RestServer> | undefined;
  const serverUrl = async (): Promise<string> => {
    server ??= startRestServer(options, dedups);
    return (await server).url;
  };
  const finals: {
    instance: Instance;
    endpoint: SynthesizedEndpoint;
    record: SynthesisRecord & { ok: true };
    key: string;
  }[] = [];
  for (const [instance, record] of synthesized) {
    if (!record.ok) continue;
    const db = databases.get(instance.dbId)!;
    const endpoint = servedEndpoint(dedups.get(instance.dbId)!, instance.id);
    finals.push({ instance, endpoint, record, key: finalKeyOf(endpoint, synthKeys.get(instance)!, db, options) });
  }
  const cachedFinal = store
    ? await store.getMany<FinalRecord>(finals.map((f) => f.key))
    : new Map<string, FinalRecord>();
  const failed = golds.size - finals.length;
  progress.done('rest.execute', failed);
  progress.done('rest.verify', failed);
  try {
    await Promise.all(
      finals.map(({ instance, endpoint, record, key }) =>
        limit(async () => {
          let final = cachedFinal.get(key);
          if (final) {
            metricsOf(metrics, 'rest.execute').cacheHits++;
            metricsOf(metrics, 'rest.verify').cacheHits++;
          } else {
            if (options.signal?.aborted) return;
            if (!computeMisses) return void notComputed(instance, 'execute');
            const db = databases.get(instance.dbId)!;
            final = await finalCheck(
              { instance, gold: golds.get(instance)! },
              endpoint,
              key,
              serverUrl,
              db,
              options,
              timed,
            );
            await store?.commit();
          }
          progress.done('rest.execute');
          progress.done('rest.verify');
          if (!final.ok) return void reject(instance, final.stage, final.category, final.message);
          results.set(instance, acceptedSample(endpoint, final, golds.get(instance)!, record));
        }),
      ),
    );
  } finally {
    await store?.flush();
    if (server) await (await server).close();
  }
  for (const [stage, m] of options.stageRunner.metrics) metrics.set(stage, m);
  return { results, dedup: dedupStats(dedups, results), metrics, aborted: results.size < count };
}

/** The live server of these databases' deduped endpoints, on an ephemeral loopback port. */
export async function startRestServer(
  options: Pick<RestRunOptions, 'databases' | 'executor' | 'config' | 'datasetName'>,
  dedups: ReadonlyMap<string, DatabaseDedup>,
): Promise<RestServer> {
  const { createRestServer } = await restServer();
  return createRestServer({
    databases: options.databases
      .filter((db) => dedups.has(db.dbId))
      .map((db) => ({ db, endpoints: dedups.get(db.dbId)!.canonical })),
    executor: options.executor,
    timeoutMs: options.config.executeTimeoutMs,
    title: `${options.datasetName} REST API`,
    version: packageVersion(),
    maxStringLength: options.config.rest.maxStringLength,
  });
}

function acceptedSample(
  endpoint: SynthesizedEndpoint,
  final: FinalRecord & { ok: true },
  gold: GoldResult,
  record: SynthesisRecord & { ok: true },
): AcceptedRestSample {
  return {
    ok: true,
    endpoint,
    response: final.response,
    gold,
    verification: final.verification,
    synthesizer: record.synthesizer,
    attempts: record.attempts,
  };
}

function dedupStats(
  dedups: ReadonlyMap<string, DatabaseDedup>,
  results: ReadonlyMap<Instance, RestResult>,
): RestDedupStats {
  const published = new Map<string, Set<string>>();
  for (const [instance, result] of results) {
    if (!result.ok) continue;
    const set = published.get(instance.dbId) ?? new Set<string>();
    set.add(result.endpoint.spec.operationId);
    published.set(instance.dbId, set);
  }
  const byDb: RestDedupStats['byDb'] = {};
  const merges: RestDedupStats['merges'] = [];
  for (const [db, dedup] of dedups) {
    byDb[db] = { before: dedup.before, after: dedup.canonical.length, published: published.get(db)?.size ?? 0 };
    merges.push(...dedup.merges.map((m) => ({ db, ...m })));
  }
  return { byDb, merges };
}
