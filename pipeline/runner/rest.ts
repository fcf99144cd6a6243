import pLimit from 'p-limit';
import { performance } from 'node:perf_hooks';
import type { Config } from '../../config/schema.js';
import type { SynthesizedEndpoint } from '../../generators/rest/spec.js';
import type { Synthesizer } from '../../generators/rest/synthesis.js';
import type { RestServer } from '../../runtime/rest/server.js';
import { lazy } from '../lazy.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import type { AnswerJudge } from '../../verifiers/judge.js';
import type { DatabaseInfo, GoldResult, Instance } from '../model.js';
import { packageVersion } from '../package-root.js';
import { ProgressTracker, type ProgressListener } from '../progress.js';
import type { AcceptedRestSample, RejectedSample, RestResult, Verification } from '../samples.js';
import { dbCacheKey } from '../stages/db-key.js';
import { goldStage } from '../stages/gold.js';
import { dedupDatabase, type DatabaseDedup, type DedupAgent } from '../stages/rest-dedup.js';
import { callOverHttp } from '../stages/rest-execute.js';
import { synthesizeWithRetries, type SynthesisItem, type SynthesisRecord } from '../stages/rest-synthesize.js';
import { directResponse, verifyRest, type RestVerifyContext } from '../stages/rest-verify.js';
import type { OutcomeStore } from '../store/outcome-store.js';
import { cacheKeyOf } from '../store/run-store.js';
import { restSynthesisKey } from './rest-keys.js';
import { withRetries } from './retry.js';
import { INTERNAL_ERROR, metricsOf, type StageMetrics, type StageRunner } from './stage-runner.js';

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

export interface RestServices {
  synthesizer: Synthesizer;
  /** Tried once after the synthesizer's last failed attempt (the template, behind an LLM). */
  fallback: Synthesizer | null;
  judge: AnswerJudge | null;
  dedupAgent: DedupAgent | null;
  /** What besides the synthesized endpoints decides dedup (the agent's model and prompts): part of output keys. */
  dedupFingerprint: unknown;
}

export interface RestRunOptions {
  config: Config;
  databases: readonly DatabaseInfo[];
  instances: readonly Instance[];
  datasetName: string;
  executor: SqlExecutor;
  store: OutcomeStore | null;
  /** Runs gold (its cache is shared with the SLOT/SEL flow). */
  stageRunner: StageRunner;
  services: RestServices;
  code: string;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
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

const VERIFY_VERSION = 1;

type FinalRecord = { ok: true; response: unknown; verification: Verification } | { ok: false; stage: 'execute' | 'verify'; category: string; message: string };

export async function runRest(options: RestRunOptions): Promise<RestRunResult> {
  const { config, store, services } = options;
  const databases = new Map(options.databases.map((db) => [db.dbId, db]));
  const metrics = new Map<string, StageMetrics>();
  const timed = async <T>(stage: string, work: () => Promise<T>, runs = 1, hits = 0): Promise<T> => {
    const m = metricsOf(metrics, stage);
    const started = performance.now();
    try {
      return await work();
    } finally {
      m.ms += performance.now() - started;
      m.runs += runs;
      m.cacheHits += hits;
    }
  };
  const count = options.instances.length;
  const progress = new ProgressTracker(
    [['rest.synthesize', count], ['rest.dedup', options.databases.length], ['rest.execute', count], ['rest.verify', count]],
    options.onProgress,
  );
  const results = new Map<Instance, RestResult>();
  const reject = (instance: Instance, stage: RejectedSample['stage'], category: string, message: string) =>
    results.set(instance, { ok: false, stage, category, message });
  const verifyContext = (db: DatabaseInfo) => ({ db, maxStringLength: config.rest.maxStringLength, judge: services.judge });

  // 1. gold.
  const limit = pLimit(config.concurrency);
  const golds = new Map<Instance, GoldResult>();
  await Promise.all(
    options.instances.map((instance) =>
      limit(async () => {
        const db = databases.get(instance.dbId);
        if (!db) return void reject(instance, 'ingest', 'bad_input', `unknown database ${instance.dbId}`);
        const gold = await options.stageRunner.run(goldStage, { instance }, { config, db, executor: options.executor });
        if (gold.ok) golds.set(instance, gold.value);
        else reject(instance, 'gold', gold.category, gold.message);
      }),
    ),
  );
  const goldFailures = count - golds.size;
  progress.done('rest.synthesize', goldFailures);
  progress.done('rest.execute', goldFailures);
  progress.done('rest.verify', goldFailures);

  // 2. rest.synthesize, per database, misses only.
  const synthKeys = new Map<Instance, string>();
  for (const instance of golds.keys()) synthKeys.set(instance, restSynthesisKey(instance, databases.get(instance.dbId)!, options));
  const cachedSynth = store ? await store.getMany<SynthesisRecord>([...synthKeys.values()]) : new Map<string, SynthesisRecord>();
  const synthesized = new Map<Instance, SynthesisRecord>();
  for (const [instance, key] of synthKeys) {
    const hit = cachedSynth.get(key);
    if (hit) synthesized.set(instance, hit);
  }
  progress.done('rest.synthesize', synthesized.size);
  // Instance order, not the order golds finished in: batches (and so LLM prompts) are the same on every run.
  const byDb = groupByDb(options.instances.filter((i) => golds.has(i) && !synthesized.has(i)));
  await timed(
    'rest.synthesize',
    async () => {
      for (const [dbId, instances] of byDb) {
        if (options.signal?.aborted) break;
        const db = databases.get(dbId)!;
        const items: SynthesisItem[] = instances.map((instance) => ({ instance, gold: golds.get(instance)! }));
        const records = await synthesizeWithRetries(items, {
          db,
          datasetName: options.datasetName,
          synthesizer: services.synthesizer,
          fallback: services.fallback,
          attempts: config.rest.attempts,
          check: async (endpoint, item) => {
            const respond = () => directResponse(endpoint, db, options.executor, config.executeTimeoutMs);
            const { outcome } = await verifyRest(endpoint, respond, item, verifyContext(db));
            return outcome.ok ? null : { ok: false, category: outcome.category, message: outcome.message };
          },
          onSettled: (n) => progress.done('rest.synthesize', n),
        });
        instances.forEach((instance, i) => {
          synthesized.set(instance, records[i]);
          const record = records[i];
          if (record.ok || record.category !== INTERNAL_ERROR) store?.put(synthKeys.get(instance)!, 'rest.synthesize', JSON.stringify(record));
        });
        await store?.commit();
      }
    },
    [...byDb.values()].reduce((n, list) => n + list.length, 0),
    synthesized.size,
  );
  if (options.signal?.aborted) return { results, dedup: { byDb: {}, merges: [] }, metrics, aborted: true };
  for (const [instance, record] of synthesized) if (!record.ok) reject(instance, 'rest.synthesize', record.category, record.message);

  // 3. rest.dedup, per database.
  const dedups = new Map<string, DatabaseDedup>();
  const instancesByDb = groupByDb(options.instances);
  await timed('rest.dedup', async () => {
    for (const db of [...options.databases].sort((a, b) => (a.dbId < b.dbId ? -1 : 1))) {
      const endpoints = (instancesByDb.get(db.dbId) ?? []).flatMap((instance) => {
        const record = synthesized.get(instance);
        return record?.ok ? [{ instanceId: instance.id, endpoint: record.endpoint }] : [];
      });
      dedups.set(db.dbId, await dedupDatabase(endpoints, db, services.dedupAgent));
      progress.done('rest.dedup');
    }
  });

  // 4. execute over HTTP, verify.
  let server: Promise<RestServer> | undefined;
  const serverUrl = async (): Promise<string> => {
    server ??= restServer().then(({ createRestServer }) =>
      createRestServer({
        databases: options.databases.map((db) => ({ db, endpoints: dedups.get(db.dbId)!.canonical })),
        executor: options.executor,
        timeoutMs: config.executeTimeoutMs,
        title: `${options.datasetName} REST API`,
        version: packageVersion(),
        maxStringLength: config.rest.maxStringLength,
      }),
    );
    return (await server).url;
  };
  const finals: { instance: Instance; endpoint: SynthesizedEndpoint; record: SynthesisRecord & { ok: true }; key: string }[] = [];
  for (const [instance, record] of synthesized) {
    if (!record.ok) continue;
    const dedup = dedups.get(instance.dbId)!;
    const call = dedup.calls.get(instance.id)!;
    const spec = dedup.canonical.find((s) => s.operationId === call.name)!;
    const endpoint = { spec, call };
    const key = cacheKeyOf(
      'rest.verify',
      VERIFY_VERSION,
      { endpoint, synthesis: synthKeys.get(instance), db: dbCacheKey(databases.get(instance.dbId)!), judge: services.judge?.fingerprint ?? null, maxStringLength: config.rest.maxStringLength, timeoutMs: config.executeTimeoutMs },
      undefined,
      options.code,
    );
    finals.push({ instance, endpoint, record, key });
  }
  const cachedFinal = store ? await store.getMany<FinalRecord>(finals.map((f) => f.key)) : new Map<string, FinalRecord>();
  const failed = count - goldFailures - finals.length;
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
            final = await finalCheck({ instance, gold: golds.get(instance)! }, endpoint, serverUrl, verifyContext(databases.get(instance.dbId)!), timed, config);
            if (final.ok || final.category !== INTERNAL_ERROR) store?.put(key, 'rest.verify', JSON.stringify(final));
            await store?.commit();
          }
          progress.done('rest.execute');
          progress.done('rest.verify');
          if (!final.ok) return void reject(instance, final.stage, final.category, final.message);
          const sample: AcceptedRestSample = {
            ok: true,
            endpoint,
            response: final.response,
            gold: golds.get(instance)!,
            verification: final.verification,
            synthesizer: record.synthesizer,
            attempts: record.attempts,
          };
          results.set(instance, sample);
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

/** The call over HTTP, then its checks; a call that got no response at all is an internal error (not cached). */
async function finalCheck(
  item: SynthesisItem,
  endpoint: SynthesizedEndpoint,
  serverUrl: () => Promise<string>,
  ctx: RestVerifyContext,
  timed: <T>(stage: string, work: () => Promise<T>) => Promise<T>,
  config: Config,
): Promise<FinalRecord> {
  const policy = { retries: config.retries, baseMs: config.backoff.baseMs, maxMs: config.backoff.maxMs };
  const respond = async () => {
    const url = await serverUrl();
    return timed('rest.execute', () => withRetries(() => callOverHttp(url, endpoint.call, config.executeTimeoutMs), policy));
  };
  try {
    const { outcome, response } = await timed('rest.verify', () => verifyRest(endpoint, respond, item, ctx));
    if (outcome.ok) return { ok: true, response: response!.body, verification: outcome.value };
    return { ok: false, stage: 'verify', category: outcome.category, message: outcome.message };
  } catch (error) {
    return { ok: false, stage: 'execute', category: INTERNAL_ERROR, message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

function dedupStats(dedups: ReadonlyMap<string, DatabaseDedup>, results: ReadonlyMap<Instance, RestResult>): RestDedupStats {
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

function groupByDb(instances: readonly Instance[]): Map<string, Instance[]> {
  const byDb = new Map<string, Instance[]>();
  for (const instance of instances) byDb.set(instance.dbId, [...(byDb.get(instance.dbId) ?? []), instance]);
  return byDb;
}
