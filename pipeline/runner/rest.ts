import { forgetEndpointChecks } from '../../generators/rest/format-check.js';
import type { RestServer } from '../../runtime/rest/server.js';
import { groupBy } from '../../core/group.js';
import type { DatabaseInfo, GoldResult, Instance } from '../../core/model.js';
import { PriorityLimit, type Limit } from '../../core/priority-limit.js';
import type { Outcome } from '../../core/outcome.js';
import { ProgressTracker, type ProgressListener } from '../progress.js';
import type { RejectedSample, RestResult } from '../samples.js';
import type { Synthesis } from '../stages/rest-synthesize.js';
import { RestFlow, synthesisBatches, type RestFlowContext, type ServedDedup } from './rest-flow.js';
import { INTERNAL_ERROR, type StageMetrics, type StageRunner } from './stage-runner.js';

/**
 * The in-process REST runner (DESIGN.md: gold → rest.synthesize → rest.dedup → execute →
 * verify), stage by stage over the whole run, through REST's units of work (rest-flow.ts):
 *
 * 1. gold per instance (shared with SLOT/SEL through the stage cache);
 * 2. rest.synthesize in batches per database, of the instances whose outcome is not cached;
 * 3. rest.dedup per database, once all its instances are synthesized (the barrier);
 * 4. the live server on an ephemeral loopback port, started only if some call is not in the
 *    cache; each instance's call executed over HTTP and verified.
 *
 * Every instance ends in exactly one RestResult.
 */

export interface RestRunOptions extends RestFlowContext {
  databases: readonly DatabaseInfo[];
  instances: readonly Instance[];
  /** Runs every REST stage; its metrics are the result's (labelled with `restLabel`). */
  stageRunner: StageRunner;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** The run's progress when this call runs part of it (one database); default: this call's own. */
  progress?: ProgressTracker;
  /** The item slots this call may use, when it shares them with others (by-database.ts); default: `config.concurrency` of its own. */
  limit?: Limit;
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

export async function runRest(options: RestRunOptions): Promise<RestRunResult> {
  const { config } = options;
  const flow = new RestFlow(options.stageRunner, options);
  const databases = new Map(options.databases.map((db) => [db.dbId, db]));
  const count = options.instances.length;
  const progress = options.progress ?? ProgressTracker.forRest(count, options.databases.length, options.onProgress);
  const results = new Map<Instance, RestResult>();
  const reject = (instance: Instance, stage: RejectedSample['stage'], category: string, message: string) =>
    results.set(instance, { ok: false, stage, category, message });
  const skipped = (n: number) =>
    ['rest.synthesize', 'rest.execute', 'rest.verify'].forEach((stage) => progress.done(stage, n));
  const interrupted = () => options.signal?.aborted ?? false;
  const metrics = () => options.stageRunner.metrics;
  const limit = options.limit ?? new PriorityLimit(config.concurrency).lane(0);

  // 1. gold.
  const golds = new Map<Instance, GoldResult>();
  await Promise.all(
    options.instances.map((instance) =>
      limit(async () => {
        // Interrupted: the items in flight finish, the others are left for the rerun.
        if (interrupted()) return;
        const db = databases.get(instance.dbId);
        if (!db) return void reject(instance, 'ingest', 'bad_input', `unknown database ${instance.dbId}`);
        const gold = await flow.gold(instance, db);
        if (gold.ok) golds.set(instance, gold.value);
        else reject(instance, 'gold', gold.category, gold.message);
      }),
    ),
  );
  skipped(options.instances.length - golds.size);

  // 2. rest.synthesize: the stored outcomes, then batches of the other instances, formed as a queue driver forms them.
  const synthesized = new Map<Instance, Synthesis>();
  const settle = (instance: Instance, outcome: Outcome<Synthesis>) => {
    if (outcome.ok) synthesized.set(instance, outcome.value);
    else reject(instance, 'rest.synthesize', outcome.category, outcome.message);
  };
  const known = options.instances.filter((instance) => databases.has(instance.dbId));
  const stored = new Map<Instance, Outcome<Synthesis>>();
  for (const [dbId, list] of groupBy(known, (instance) => instance.dbId))
    for (const [instance, outcome] of await flow.storedSynthesis(list, databases.get(dbId)!))
      stored.set(instance, outcome);
  const storedReady = [...stored].filter(([instance]) => golds.has(instance));
  for (const [instance, outcome] of storedReady) settle(instance, outcome);
  progress.done('rest.synthesize', storedReady.length);
  const batches = synthesisBatches(known, (instance) => !stored.has(instance), config.rest.batchSize);
  await Promise.all(
    batches.map((batch) =>
      limit(async () => {
        const ready = batch.filter((instance) => golds.has(instance));
        if (interrupted() || ready.length === 0) return;
        const outcomes = await flow.synthesize(
          ready.map((instance) => ({ instance, gold: golds.get(instance)! })),
          databases.get(ready[0].dbId)!,
          (n) => progress.done('rest.synthesize', n),
        );
        ready.forEach((instance, i) => settle(instance, outcomes[i]));
        await options.stageRunner.commit();
      }),
    ),
  );
  if (interrupted()) return { results, dedup: { byDb: {}, merges: [] }, metrics: metrics(), aborted: true };

  // 3. rest.dedup, per database, its synthesized instances in instance order.
  const dedups = new Map<DatabaseInfo, ServedDedup>();
  const synthesizedByDb = groupBy(
    options.instances.filter((instance) => synthesized.has(instance)),
    (instance) => instance.dbId,
  );
  for (const db of [...options.databases].sort((a, b) => (a.dbId < b.dbId ? -1 : 1))) {
    const list = synthesizedByDb.get(db.dbId) ?? [];
    const dedup = await flow.dedup(db, new Map(list.map((instance) => [instance, synthesized.get(instance)!])));
    progress.done('rest.dedup');
    if (dedup.ok) dedups.set(db, dedup.value);
    else for (const instance of list) reject(instance, 'rest.dedup', dedup.category, dedup.message);
  }

  // 4. execute over HTTP, verify.
  let server: Promise<RestServer> | undefined;
  const serverUrl = async (): Promise<string> => {
    server ??= flow.startServer([...dedups]);
    return (await server).url;
  };
  const calls = options.instances.flatMap((instance) => {
    const db = databases.get(instance.dbId);
    const dedup = db && dedups.get(db);
    return dedup && !results.has(instance) && synthesized.has(instance) ? [{ instance, db: db, dedup }] : [];
  });
  const failed = golds.size - calls.length;
  progress.done('rest.execute', failed);
  progress.done('rest.verify', failed);
  try {
    await Promise.all(
      calls.map(({ instance, db, dedup }) =>
        limit(async () => {
          if (interrupted()) return;
          const item = { instance, gold: golds.get(instance)!, synthesis: synthesized.get(instance)! };
          const call = await flow.call(item, dedup, db, serverUrl);
          await options.stageRunner.commit();
          progress.done('rest.execute');
          progress.done('rest.verify');
          if (!call.ok) {
            // A throw (no response, a bug) is a fault of the call itself; the checks' rejections are verify's.
            const stage = call.category === INTERNAL_ERROR ? 'execute' : 'verify';
            return void reject(instance, stage, call.category, call.message);
          }
          results.set(instance, {
            ok: true,
            endpoint: flow.callInput(item, dedup).endpoint,
            response: call.value.response,
            gold: item.gold,
            verification: call.value.verification,
            synthesizer: item.synthesis.synthesizer,
            attempts: item.synthesis.attempts,
          });
        }),
      ),
    );
  } finally {
    await options.stageRunner.flush();
    if (server) await (await server).close();
    // A run goes database by database: these are not checked again.
    for (const db of options.databases) forgetEndpointChecks(db);
  }
  return { results, dedup: dedupStats(dedups, results), metrics: metrics(), aborted: results.size < count };
}

function dedupStats(
  dedups: ReadonlyMap<DatabaseInfo, ServedDedup>,
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
  for (const [{ dbId: db }, { dedup }] of dedups) {
    byDb[db] = { before: dedup.before, after: dedup.canonical.length, published: published.get(db)?.size ?? 0 };
    merges.push(...dedup.merges.map((m) => ({ db, ...m })));
  }
  return { byDb, merges };
}
