import pLimit from 'p-limit';
import type { Config } from '../../config/schema.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { orderedFormulations } from '../formulation.js';
import type { DatabaseInfo, Instance } from '../model.js';
import { ProgressTracker, type ProgressListener } from '../progress.js';
import type { ItemResult, RejectedSample } from '../samples.js';
import type { RunStore } from '../store/run-store.js';
import { runItem, type ItemStages } from './flow.js';
import { INTERNAL_ERROR, StageRunner, type StageMetrics } from './stage-runner.js';

/**
 * The default runner: every item through the stage graph in this process, at most
 * `config.concurrency` items in flight, each item's finished stage outcomes committed to
 * the run store as soon as the item is done. One item's failure never touches another.
 */

export interface InProcessRunOptions {
  config: Config;
  databases: readonly DatabaseInfo[];
  instances: readonly Instance[];
  stages: ItemStages;
  executor: SqlExecutor;
  /** null: no cache at all (tests, or a throwaway run). */
  store: RunStore | null;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** Injectable for tests (backoff without waiting). */
  sleep?: (ms: number) => Promise<void>;
}

export interface RunResult {
  /** One per instance that ran, in instance index order. */
  items: ItemResult[];
  metrics: Map<string, StageMetrics>;
  /** The signal fired: some instances never ran, the result is partial. */
  aborted: boolean;
}

export async function runInProcess(options: InProcessRunOptions): Promise<RunResult> {
  const { config, store } = options;
  const formulations = orderedFormulations(config.formulations);
  const databases = new Map(options.databases.map((db) => [db.dbId, db]));
  const stageRunner = new StageRunner(
    store,
    { retries: config.retries, baseMs: config.backoff.baseMs, maxMs: config.backoff.maxMs },
    options.sleep,
  );
  const progress = new ProgressTracker(options.instances.length, formulations, options.onProgress);
  const limit = pLimit(config.concurrency);

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
        { config, db, executor: options.executor },
        (stage, input, ctx) => stageRunner.run(stage, input, ctx),
        { stageDone: (stage) => progress.done(stage) },
      );
    } catch (error) {
      // A fault of the flow itself (not of a stage): this item only.
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      result = rejectedEverywhere(instance, 'runner', INTERNAL_ERROR, message);
    }
    store?.commit();
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

  const settled = await Promise.all(options.instances.map((instance) => limit(() => runOne(instance))));
  store?.commit();
  const items = settled.filter((r): r is ItemResult => r !== null).sort((a, b) => a.instance.index - b.instance.index);
  return { items, metrics: stageRunner.metrics, aborted: items.length < options.instances.length };
}
