import type { Config } from '../../config/schema.js';
import { PriorityLimit, type Limit } from '../../core/priority-limit.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { type DatabaseInfo, type GoldResult, type Instance, sequenceFormulations } from '../../core/model.js';
import type { Outcome } from '../../core/outcome.js';
import { ProgressTracker, type ProgressListener } from '../progress.js';
import { codeFingerprint } from '../code-fingerprint.js';
import type { AcceptedSample, FormulationResult, ItemResult, RejectedSample } from '../samples.js';
import type { Verification } from '../../verifiers/checks.js';
import type { OutcomeStore } from '../store/outcome-store.js';
import { cacheKeyOf } from '../store/run-store.js';
import {
  planItem,
  runItem,
  stagesReached,
  type ExecutionRecord,
  type ItemPlan,
  type ItemStages,
  type SampleKeys,
  type KeyPlanner,
} from './flow.js';
import { retryPolicyOf } from './retry.js';
import { faultMessage, INTERNAL_ERROR, StageRunner, type StageMetrics } from './stage-runner.js';
import { pathStages, SHARED_STAGES } from '../graph.js';

/**
 * The default runner of the SLOT/SEL stages: every item through the stage graph in this process, at most
 * `config.concurrency` items in flight, each item's finished stage outcomes committed to
 * the run store (group commits, run-store.ts). One item's failure never touches another.
 *
 * With a store, each item's result per formulation is also recorded, under a key planned
 * from the item alone (flow.ts, planItem): a rejection as is, an accepted sample as the keys
 * of the stage outcomes it is made of. A rerun first looks those up for all items in a few
 * batched reads: an item found whole is rebuilt from them without running its flow (the
 * warm path); the stage outcomes of the others are read ahead in batches.
 */

export interface InProcessRunOptions {
  config: Config;
  databases: readonly DatabaseInfo[];
  instances: readonly Instance[];
  stages: ItemStages;
  executor: SqlExecutor;
  /** null: no cache at all (tests, or a throwaway run). */
  store: OutcomeStore | null;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** Injectable for tests (backoff without waiting). */
  sleep?: (ms: number) => Promise<void>;
  /** Part of every cache key; default: the fingerprint of this build (code-fingerprint.ts). */
  codeFingerprint?: string;
  /** false: only assemble what the store holds (a queue driver); a missing outcome is an internal error. */
  computeMisses?: boolean;
  /** The run's progress when this call runs part of it (one database); default: this call's own. */
  progress?: ProgressTracker;
  /** The item slots this call may use, when it shares them with others (by-database.ts); default: `config.concurrency` of its own. */
  limit?: Limit;
  /** The items' plans where the caller made them already (planResults, with the same code fingerprint); default: planned here. */
  plans?: ReadonlyMap<Instance, PlannedItem>;
}

export interface PlannedItem {
  plan: ItemPlan;
  /** By formulation: the key of the item's whole result record. */
  resultKeys: Record<string, string>;
}

/**
 * The result keys of every item that can be planned (flow.ts, planItem), computed without
 * running or loading anything. `planner` computes keys as the run will (same code fingerprint).
 */
export function planResults(
  options: Pick<InProcessRunOptions, 'config' | 'databases' | 'instances' | 'stages' | 'executor'>,
  planner: KeyPlanner,
): Map<Instance, PlannedItem> {
  const formulations = sequenceFormulations(options.config.formulations);
  const databases = new Map(options.databases.map((db) => [db.dbId, db]));
  const plans = new Map<Instance, PlannedItem>();
  for (const instance of options.instances) {
    const db = databases.get(instance.dbId);
    const plan =
      db &&
      planItem(
        instance,
        formulations,
        options.stages,
        { config: options.config, db, executor: options.executor },
        planner,
      );
    if (!plan) continue;
    const resultKeys = Object.fromEntries(
      formulations.map((f) => [f, cacheKeyOf(RESULT_STAGE, RESULT_RECORD_VERSION, plan.samples[f]!.verify)]),
    );
    plans.set(instance, { plan, resultKeys });
  }
  return plans;
}

export interface RunResult {
  /** One per instance that ran, in instance index order. */
  items: ItemResult[];
  metrics: Map<string, StageMetrics>;
  /** The signal fired: some instances never ran, the result is partial. */
  aborted: boolean;
}

/** Bump when the stored item result record changes shape. */
const RESULT_RECORD_VERSION = 2;
const RESULT_STAGE = 'item.result';

/**
 * What is stored of an item's result per formulation: a rejection as it is; an accepted
 * sample as the keys of the stage outcomes it is made of (they are stored anyway: no copy).
 */
type StoredResult = RejectedSample | { ok: true; parts: SampleKeys };

/** An accepted sample from its stored parts; undefined if one is missing or not accepted. */
function sampleFromParts(
  parts: SampleKeys,
  outcomes: ReadonlyMap<string, Outcome<unknown>>,
): AcceptedSample | undefined {
  const [gold, sequence, execution, verification] = [parts.gold, parts.sequence, parts.execute, parts.verify].map(
    (key) => outcomes.get(key),
  );
  if (!gold?.ok || !sequence?.ok || !execution?.ok || !verification?.ok) return undefined;
  const record = execution.value as ExecutionRecord;
  return {
    ok: true,
    sequence: sequence.value as AcceptedSample['sequence'],
    outputs: record.ok ? record.outputs : [],
    gold: gold.value as GoldResult,
    verification: verification.value as Verification,
  };
}

export async function runInProcess(options: InProcessRunOptions): Promise<RunResult> {
  const { config, store } = options;
  const formulations = sequenceFormulations(config.formulations);
  const databases = new Map(options.databases.map((db) => [db.dbId, db]));
  const stageRunner = new StageRunner(
    store,
    retryPolicyOf(config),
    options.sleep,
    store ? (options.codeFingerprint ?? codeFingerprint()) : '',
    options.computeMisses ?? true,
  );
  const progress =
    options.progress ?? ProgressTracker.forSequences(options.instances.length, formulations, options.onProgress);
  const limit = options.limit ?? new PriorityLimit(config.concurrency).lane(0);
  const contextOf = (db: DatabaseInfo) => ({ config, db, executor: options.executor });

  // Whole item results where the cache has them; the other items' stage outcomes read ahead.
  const plans = !store ? new Map<Instance, PlannedItem>() : (options.plans ?? planResults(options, stageRunner));
  const resultKeys = new Map<Instance, Record<string, string>>([...plans].map(([i, p]) => [i, p.resultKeys]));
  const found = new Map<string, FormulationResult>();
  if (store) {
    const stored = await store.getMany<StoredResult>([...resultKeys.values()].flatMap(Object.values));
    const parts = await store.getMany<Outcome<unknown>>(
      [...stored.values()].flatMap((r) => (r.ok ? (Object.values(r.parts) as string[]) : [])),
    );
    for (const [key, result] of stored) {
      const sample = result.ok ? sampleFromParts(result.parts, parts) : result;
      if (sample) found.set(key, sample);
    }
    await store.prefetch(
      [...plans].flatMap(([, { plan, resultKeys: keys }]) =>
        Object.values(keys).every((key) => found.has(key)) ? [] : plan.keys,
      ),
    );
  }

  const cachedResult = (instance: Instance): ItemResult | undefined => {
    const keys = resultKeys.get(instance);
    if (!keys || !formulations.every((f) => found.has(keys[f]))) return undefined;
    const result: ItemResult = {
      instance,
      results: Object.fromEntries(formulations.map((f) => [f, found.get(keys[f])!])),
    };
    for (const stage of stagesReached(result.results, formulations)) stageRunner.countCacheHit(stage);
    for (const stage of [...SHARED_STAGES, ...formulations.flatMap(pathStages)]) progress.done(stage);
    return result;
  };

  const storeResult = (result: ItemResult): void => {
    const planned = plans.get(result.instance);
    if (!store || !planned) return;
    for (const f of formulations) {
      const r = result.results[f];
      const key = planned.resultKeys[f];
      // Internal errors are faults of the run, not of the item: never cached.
      if (!r || (!r.ok && (r.category === INTERNAL_ERROR || r.stage === 'runner')) || found.has(key)) continue;
      const record: StoredResult = r.ok ? { ok: true, parts: planned.plan.samples[f]! } : r;
      store.put(key, RESULT_STAGE, JSON.stringify(record));
    }
  };

  const runOne = async (instance: Instance): Promise<ItemResult | null> => {
    if (options.signal?.aborted) return null;
    const db = databases.get(instance.dbId);
    let result: ItemResult;
    try {
      if (!db) return rejectedEverywhere(instance, 'ingest', 'bad_input', `unknown database ${instance.dbId}`);
      result = await runItem(
        instance,
        formulations,
        options.stages,
        contextOf(db),
        (stage, input, ctx, key) => stageRunner.run(stage, input, ctx, key),
        { stageDone: (stage) => progress.done(stage) },
        plans.get(instance)?.plan,
      );
      storeResult(result);
    } catch (error) {
      // A fault of the flow itself (not of a stage): this item only.
      result = rejectedEverywhere(instance, 'runner', INTERNAL_ERROR, faultMessage(error));
    }
    await store?.commit();
    return result;
  };

  const rejectedEverywhere = (
    instance: Instance,
    stage: RejectedSample['stage'],
    category: string,
    message: string,
  ): ItemResult => ({
    instance,
    results: Object.fromEntries(formulations.map((f) => [f, { ok: false, stage, category, message }])),
  });

  const settled = await Promise.all(
    options.instances.map((instance) => {
      const cached = !options.signal?.aborted && cachedResult(instance);
      return cached ? Promise.resolve(cached) : limit(() => runOne(instance));
    }),
  );
  await store?.flush();
  const items = settled.filter((r): r is ItemResult => r !== null).sort((a, b) => a.instance.index - b.instance.index);
  return { items, metrics: stageRunner.metrics, aborted: items.length < options.instances.length };
}
