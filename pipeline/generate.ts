import path from 'node:path';
import { UserFacingError } from '../core/errors.js';
import { type Formulation, type Instance, orderedFormulations, sequenceFormulations } from '../core/model.js';
import { performance } from 'node:perf_hooks';
import { cacheDirOf } from '../config/load.js';
import { outputRelevantConfig, type Config } from '../config/schema.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import { createSqlPool, type SqlPool } from '../runtime/sql/pool.js';
import { writeArtifact, type EmittedFile } from './emit-artifact.js';
import { jsonlText, jsonText, removeAbandonedTemporaries } from './files.js';
import { ProgressTracker, restLabel, type ProgressListener } from './progress.js';
import { planResults, runInProcess, type PlannedItem } from './runner/in-process.js';
import { runByDatabase } from './runner/by-database.js';
import { retryPolicyOf } from './runner/retry.js';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { RestDedupStats } from './runner/rest.js';
import { RestFlow } from './runner/rest-flow.js';
import { runChains } from './runner/chain.js';
import { restServices } from './rest-services.js';
import { INTERNAL_ERROR, NOT_COMPUTED, StageRunner } from './runner/stage-runner.js';
import type { OutcomeStore } from './store/outcome-store.js';
import type { QueueDriveResult } from './queue/driver.js';
import { queueBackend, type QueueBackend } from './queue/backend.js';
import type { RestServiceHandle } from './rest-service-types.js';
import { codeFingerprint } from './code-fingerprint.js';
import { rememberRunOutputs, reusableRunOutputs, runOutputsKey } from './output-reuse.js';
import type { ItemStages } from './runner/flow.js';
import { summarize, type ItemResult, type ItemSummary } from './samples.js';
import { dbCacheKey } from './stages/db-key.js';
import { ITEM_STAGES, emitStage, ingestStage } from './stages/index.js';
import {
  assertNothingLost,
  collectRejections,
  chainStats,
  type ChainStats,
  computeStats,
  type DeterministicStats,
  type RunStats,
  type RunTiming,
} from './stats.js';
import { memoizeExecutor } from './sql-memo.js';
import { RunStore } from './store/run-store.js';
import { sha256File } from './sources/schema.js';
import { datasetCard } from './dataset-card.js';
import { describeRun, manifestOf, outputLicense } from './manifest.js';
import { ensureWritableDir } from './setup-error.js';
import { releaseToolRegistries } from './tool-registry.js';
import { forgetVariantLookups } from './variants.js';

/**
 * A whole run: ingest → item stages (in-process runner, run store) → the nothing-lost
 * check → emit per database → rejections, stats and manifest.
 */

export interface GenerateOptions {
  config: Config;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** Default: the killable SQL process pool of `config.sqlWorkers` workers (closed at the end). */
  executor?: SqlExecutor;
  /** Default: the registry's stages (tests swap in toy stages). */
  stages?: ItemStages;
  /** The chat model behind REST's LLM agents; default: createChatModel(config.llm). Tests pass a scripted one. */
  chatModel?: BaseChatModel;
  /** Lines worth a user's attention while the run goes (the queue run's id, worker faults). */
  log?: (line: string) => void;
}

export interface GenerateResult {
  outDir: string;
  /** Absent when the run was aborted before emitting. */
  stats?: RunStats;
  files: EmittedFile[];
  aborted: boolean;
  warnings: string[];
}

export class SourceError extends UserFacingError {
  override name = 'SourceError';
}

export async function generate(options: GenerateOptions): Promise<GenerateResult> {
  const started = performance.now();
  const { config } = options;
  if (!config.source) throw new SourceError('no source given (--source <dir>)');
  const formulations = orderedFormulations(config.formulations);
  const outDir = path.resolve(config.out);
  ensureWritableDir(outDir, 'output folder (--out)');
  await removeAbandonedTemporaries(outDir);
  ensureWritableDir(cacheDirOf(config), 'cache folder (--cache-dir)');

  // Database fingerprints are remembered locally; outcomes live in Redis with a queue backend, else here too.
  const local = new RunStore({ dir: cacheDirOf(config), read: config.cache });
  // Redis before any work: an unreachable or misconfigured queue backend is one line, at once.
  const backend: QueueBackend | null = config.queue
    ? await queueBackend(config, options.log).catch((error: unknown) => {
        local.close();
        throw error;
      })
    : null;
  let source;
  try {
    source = await ingestStage.run(config.source, {
      dbIds: config.dbIds,
      fingerprint: config.fingerprintCache ? (file) => local.fingerprint(file, sha256File) : undefined,
    });
  } catch (error) {
    local.close();
    await backend?.close();
    throw new SourceError((error as Error).message);
  }
  // Everything opened from here on is closed in the `finally`, whatever fails.
  let ownExecutor: SqlPool | null = null;
  let openedServices: RestServiceHandle | null = null;
  let queued: QueueDriveResult | null = null;
  try {
    const store: OutcomeStore = backend?.store ?? local;
    const wantsRest = formulations.includes('rest');
    // REST's spare worker: a trial run killed at its budget (rest.synthesize) does not leave the
    // next one waiting for a process. SLOT/SEL alone rarely kill one (a gold timeout), and a
    // spare would cost a process start (~0.2 CPU-s) for nothing.
    ownExecutor = options.executor
      ? null
      : createSqlPool({ size: config.sqlWorkers, spare: wantsRest ? 1 : 0, lookahead: 1 });
    const datasetName = config.datasetName ?? source.datasetName;
    const executor = memoizeExecutor(options.executor ?? ownExecutor!);
    const stages = options.stages ?? ITEM_STAGES;
    const code = codeFingerprint();
    const services = wantsRest
      ? await restServices(config, executor, { model: options.chatModel, shared: backend?.sharedLlm })
      : null;
    openedServices = services;
    const timing = (stageMetrics: RunTiming['stages'], outputsReused: boolean): RunTiming => ({
      wallMs: Math.round(performance.now() - started),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      stages: stageMetrics,
      sql: executor.counts(),
      outputsReused,
      ...(services?.usage ? { llm: services.usage.snapshot() } : {}),
      ...(queued ? { queueRunId: queued.runId } : {}),
    });
    const runOptions = { config, databases: source.databases, instances: source.instances, stages, executor };
    const planner = new StageRunner(store, { retries: 0, baseMs: 0, maxMs: 0 }, undefined, code);
    const restPlan = services && new RestFlow(planner, { config, datasetName, executor, services: services.services });
    // Every item's plan (its stage keys): whether the outputs can be reused, what a queue drive
    // waits for, and the keys each database's run looks up and stores under. They are as large
    // as the corpus: a database's plans are let go as its run starts, the rest of `keys` after the drive.
    const plans = planResults(runOptions, planner);
    let keys: RunKeys | null = runKeys(source, plans, restPlan);
    const outputsKey =
      keys.results.size === source.instances.length
        ? runOutputsKey(
            {
              dataset: datasetName,
              layout: source.layout,
              config: outputRelevantConfig(config),
              ingestRejections: source.rejections,
              // What the card and manifest say of the source besides its instances.
              source: [
                path.basename(source.questionFile.path),
                source.questionFile.sha256,
                outputLicense(source, config),
              ],
              // Content and schema (with the descriptions that end up in tool specs).
              databases: source.databases.map((db) => [db.dbId, dbCacheKey(db)]),
              results: keysInSourceOrder(source.instances, keys.results),
              ...(services ? { rest: keys.synthesis, dedup: services.services.dedupFingerprint } : {}),
              ...(services && formulations.includes('chain')
                ? { chainWriter: services.services.chainWriter.fingerprint }
                : {}),
            },
            code,
          )
        : undefined;
    const reused = outputsKey && (await reusableRunOutputs(store, outputsKey, outDir));
    if (reused) {
      const stats: RunStats = { ...reused.stats, timing: timing({}, true) };
      await writeArtifact(outDir, 'stats.json', jsonText(stats));
      await writeArtifact(outDir, 'manifest.json', jsonText(reused.manifest));
      return { outDir, stats, files: reused.manifest.files, aborted: false, warnings: source.warnings };
    }

    const sequences = sequenceFormulations(formulations).length > 0;
    if (backend) {
      queued = await backend.drive({
        config,
        queue: { ...config.queue!, runId: backend.runId },
        redis: backend.redis,
        watch: backend.watch,
        store,
        spec: { config, datasetName, databases: source.databases, instances: source.instances, code },
        source: config.source,
        out: outDir,
        resultKeys: sequences ? keysPerInstance(keys.results) : null,
        synthesisKeys: keys.synthesis && synthesisKeysPerInstance(source.instances, keys.synthesis),
        signal: options.signal,
        onProgress: options.onProgress,
        chatModel: options.chatModel,
        log: options.log,
      });
      if (queued.aborted) return { outDir, files: [], aborted: true, warnings: source.warnings };
      if (services?.usage) for (const [model, totals] of Object.entries(queued.llm)) services.usage.add(model, totals);
    }
    keys = null;
    // With a queue backend, the workers have computed everything: the runners only assemble it from the store.
    const computeMisses = !queued;
    const listener = queued ? undefined : options.onProgress;
    const sequenceProgress = ProgressTracker.forSequences(
      source.instances.length,
      sequenceFormulations(formulations),
      listener,
    );
    const restRunner = services && (await import('./runner/rest.js')).runRest;
    const restProgress = ProgressTracker.forRest(source.instances.length, source.databases.length, listener);
    const files: EmittedFile[] = [];
    const summaries: ItemSummary[] = [];
    // Counted as each database is written: the summaries keep no chains.
    const chains: ChainStats | undefined = formulations.includes('chain')
      ? { samples: 0, byHops: {}, byTransform: {}, byDb: {}, byOrigin: {} }
      : undefined;
    const run = await runByDatabase(
      source.databases,
      source.instances,
      {
        sequences: sequences
          ? (part) =>
              runInProcess({
                ...runOptions,
                ...part,
                store,
                signal: options.signal,
                progress: sequenceProgress,
                codeFingerprint: code,
                computeMisses,
                plans: takePlans(plans, part.instances),
              })
          : null,
        rest: restRunner
          ? (part) =>
              restRunner({
                config,
                ...part,
                datasetName,
                executor,
                services: services.services,
                // One per database: its metrics are that database's, summed by runByDatabase.
                stageRunner: new StageRunner(store, retryPolicyOf(config), undefined, code, computeMisses, restLabel),
                signal: options.signal,
                progress: restProgress,
              })
          : null,
        chains: formulations.includes('chain')
          ? (part, rest) =>
              runChains(part, rest, {
                config,
                executor,
                writer: services!.services.chainWriter,
                datasetName,
                // It computes with a queue backend too: the workers made the REST results, the driver composes.
                stageRunner: new StageRunner(store, retryPolicyOf(config), undefined, code),
              })
          : null,
      },
      config.concurrency,
      async (db, items) => {
        if (queued) explainJobFailures(items, queued.failed);
        if (db) files.push(...(await emitStage.run({ items }, { config, db, datasetName, outDir })));
        if (chains) chainStats(items, chains);
        for (const item of items) summaries.push(summarize(item));
        // Nothing of this database is asked again: its shared SQL results and tool specs go with it.
        if (db) {
          executor.forget(db.path);
          releaseToolRegistries(db);
          forgetVariantLookups(db);
        }
      },
    );
    if (run.aborted) return { outDir, files: [], aborted: true, warnings: source.warnings };
    // The run-level files list items in source order, not database by database.
    summaries.sort((a, b) => a.instance.index - b.instance.index);

    const statsWithoutTiming = checkedStats(source, datasetName, formulations, summaries, run.dedup, chains);
    const rejections = collectRejections(summaries, source.rejections, formulations);
    files.push(await writeArtifact(outDir, 'rejections.jsonl', jsonlText(rejections)));
    const metrics = Object.fromEntries(
      [...(queued ? queued.metrics : run.metrics)].map(([name, m]) => [name, { ...m, ms: Math.round(m.ms) }]),
    );
    const stats: RunStats = { ...statsWithoutTiming, timing: timing(metrics, false) };
    await writeArtifact(outDir, 'stats.json', jsonText(stats));
    const description = describeRun({ source, datasetName, config, items: summaries, stats: statsWithoutTiming });
    files.push(await writeArtifact(outDir, 'README.md', datasetCard(description, statsWithoutTiming)));
    const manifest = manifestOf(description, files);
    await writeArtifact(outDir, 'manifest.json', jsonText(manifest));
    // A run with internal errors (faults of the run, not of the items) must run again next time.
    if (outputsKey && !hasInternalErrors(statsWithoutTiming))
      rememberRunOutputs(store, outputsKey, { stats: statsWithoutTiming, manifest });
    await store.flush();
    await queued?.registry.finish(queued.runId, { state: 'completed', outcome: manifest.counts });
    return { outDir, stats, files, aborted: false, warnings: source.warnings };
  } catch (error) {
    await queued?.registry.finish(queued.runId, { state: 'failed', error: (error as Error).message }).catch(() => {});
    throw error;
  } finally {
    local.close();
    openedServices?.close();
    await backend?.close();
    await ownExecutor?.close();
  }
}

/** Every item's keys, as the run plans them before it runs anything. */
interface RunKeys {
  /** By instance (those that can be planned), by formulation: the key of its result record. */
  results: Map<Instance, Record<string, string>>;
  /** In source order: each instance's rest.synthesize key (null: its database is missing); null without REST. */
  synthesis: (string | null)[] | null;
}

function runKeys(source: LoadedSource, plans: ReadonlyMap<Instance, PlannedItem>, restPlan: RestFlow | null): RunKeys {
  const databases = new Map(source.databases.map((db) => [db.dbId, db]));
  return {
    results: new Map([...plans].map(([instance, plan]) => [instance, plan.resultKeys])),
    synthesis:
      restPlan &&
      source.instances.map((instance) => {
        const db = databases.get(instance.dbId);
        return db ? restPlan.synthesisKey(instance, db) : null;
      }),
  };
}

/** The plans of `instances`, taken out of `plans` (planning an item again cost ~0.5 ms). */
function takePlans(plans: Map<Instance, PlannedItem>, instances: readonly Instance[]): Map<Instance, PlannedItem> {
  const taken = new Map<Instance, PlannedItem>();
  for (const instance of instances) {
    const plan = plans.get(instance);
    if (plan) taken.set(instance, plan);
    plans.delete(instance);
  }
  return taken;
}

function keysInSourceOrder(instances: readonly Instance[], results: RunKeys['results']): Record<string, string>[] {
  return instances.map((instance) => results.get(instance)!);
}

function keysPerInstance(results: RunKeys['results']): Map<Instance, string[]> {
  return new Map([...results].map(([instance, keys]) => [instance, Object.values(keys)]));
}

function synthesisKeysPerInstance(instances: readonly Instance[], synthesis: (string | null)[]): Map<Instance, string> {
  return new Map(instances.flatMap((instance, i) => (synthesis[i] ? [[instance, synthesis[i]]] : [])));
}

/**
 * An instance whose job failed for good was not computed: the assembling runners report it
 * as missing from the store; it becomes a `job_failed` rejection that says which job failed and why.
 */
function explainJobFailures(items: readonly ItemResult[], failed: QueueDriveResult['failed']): void {
  for (const item of items) {
    for (const [formulation, result] of Object.entries(item.results)) {
      const reason = (formulation === 'rest' || formulation === 'chain' ? failed.rest : failed.sequence).get(
        item.instance.index,
      );
      if (reason && result && !result.ok && result.category === INTERNAL_ERROR && result.message === NOT_COMPUTED) {
        item.results[formulation as Formulation] = { ...result, category: 'job_failed', message: reason };
      }
    }
  }
}

function hasInternalErrors(stats: DeterministicStats): boolean {
  return Object.values(stats.formulations).some((f) =>
    Object.keys(f.total.rejectedBy).some((reason) => reason.endsWith(`:${INTERNAL_ERROR}`)),
  );
}

type LoadedSource = Awaited<ReturnType<typeof ingestStage.run>>;

/** The run's stats (timing aside), after checking that every instance ended exactly once per formulation. */
function checkedStats(
  source: LoadedSource,
  datasetName: string,
  formulations: readonly Formulation[],
  items: readonly ItemSummary[],
  rest?: RestDedupStats,
  chain?: ChainStats,
): DeterministicStats {
  const dbIds = [...new Set([...source.databases.map((db) => db.dbId), ...source.rejections.map((r) => r.db)])];
  const expected = new Map<string, number>(dbIds.map((db) => [db, 0]));
  for (const i of source.instances) expected.set(i.dbId, (expected.get(i.dbId) ?? 0) + 1);
  for (const r of source.rejections) expected.set(r.db, (expected.get(r.db) ?? 0) + 1);
  const stats = computeStats({ dataset: datasetName, dbIds, formulations, items, ingestRejections: source.rejections });
  assertNothingLost(stats, expected);
  return { ...stats, ...(rest ? { rest } : {}), ...(chain ? { chain } : {}) };
}
