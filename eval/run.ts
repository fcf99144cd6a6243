import path from 'node:path';
import pLimit from 'p-limit';
import type { Config } from '../config/schema.js';
import { Cleanups } from '../core/cleanups.js';
import type { DatabaseInfo, Formulation } from '../core/model.js';
import { accept } from '../core/outcome.js';
import { packageVersion } from '../core/package-root.js';
import { createChatModel } from '../generators/llm/chat-model.js';
import { LlmClient } from '../generators/llm/client.js';
import { SqliteLlmCache } from '../generators/llm/sqlite-cache.js';
import { UsageMeter, type UsageSnapshot } from '../generators/llm/usage.js';
import { LlmConfigSchema, type LlmProvider } from '../generators/llm/config.js';
import { PROVIDER_NAMES } from '../generators/llm/providers.js';
import { codeFingerprint, CODE_DIRS } from '../pipeline/code-fingerprint.js';
import { retryPolicyOf } from '../pipeline/runner/retry.js';
import { StageRunner } from '../pipeline/runner/stage-runner.js';
import { ensureWritableDir } from '../pipeline/setup-error.js';
import { loadSource } from '../pipeline/sources/index.js';
import type { CachedStage, StageContext } from '../pipeline/stage.js';
import { RunStore } from '../pipeline/store/run-store.js';
import { createRestServer, type RestServer } from '../runtime/rest/server.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import { createSqlPool } from '../runtime/sql/pool.js';
import { runAttempt, type AttemptRecord } from './attempt.js';
import { runSqlAttempt, sqlPromptSource } from './sql-baseline.js';
import { DatasetError, loadEvalDataset, type EvalDataset, type EvalItem } from './dataset.js';
import { openEpisode, type EnvironmentOptions } from './environment.js';
import { knnModel, llmModel, oracleModel, type EvalModel } from './models/model.js';
import { NeighbourIndex } from './models/knn.js';
import { promptSource, type PromptSettings } from './prompts.js';
import { writeReport } from './report/write.js';
import { summarize, type EvalSummary, type ResultLine } from './summary.js';
import { toolView } from './tool-view.js';

/**
 * `nl2api eval`: models (or agents) on a generated dataset, on the pipeline's own machinery.
 * Each attempt (model × item × repeat) is a cached stage run through the StageRunner and the
 * run store, keyed by the item's content, the model, the settings, the prompt templates and
 * the code: a rerun asks nothing it has asked (an interrupted run also finds the model
 * replies it got in the LLM reply cache). A fault of the run (a provider that never
 * answered, a lost SQL worker) leaves its attempt failed and uncached: the next run tries it.
 */

export interface EvalOptions {
  /** The run's config (`--config`, flags): SQL workers, concurrency, LLM limits, retries. */
  config: Config;
  /** The generated output folder. */
  dataset: string;
  formulation: Formulation;
  /** `oracle`, `baseline:knn`, `<provider>:<model>[@<base url>]`. */
  models: string[];
  mode: 'direct' | 'react';
  tools: 'native' | 'prompt';
  shots: number;
  repeats: number;
  budget: number;
  limit?: number;
  obfuscate: boolean;
  shortlist: number;
  /** Also ask each model for SQL (Live API-Bench B.3): its completion rate beside the API one. */
  sqlBaseline?: boolean;
  report: string;
  /** Where results and replies are cached (default `<report>/.cache`). */
  cacheDir?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /** Tests: models beyond the registry's. */
  extraModels?: Record<string, EvalModel>;
}

export interface EvalRun {
  summary: EvalSummary;
  lines: ResultLine[];
  files: string[];
  usage: UsageSnapshot;
  aborted: boolean;
}

const EVAL_STAGE = 'eval.attempt';

interface AttemptJob {
  item: EvalItem;
  model: EvalModel;
  modelKey: unknown;
  repeat: number;
  examples: EvalItem[];
  /** `sql`: the SQL baseline's attempt at the item. */
  kind: 'tools' | 'sql';
}

export async function runEval(options: EvalOptions): Promise<EvalRun> {
  const { config } = options;
  if (!config.source)
    throw new DatasetError('no source given (--source <dir>): the databases the dataset was generated from');
  const dataset = await loadEvalDataset(options.dataset, {
    formulation: options.formulation,
    dbIds: config.dbIds,
    limit: options.limit,
  });
  const databases = await openDatabases(config.source, dataset);
  const report = path.resolve(options.report);
  ensureWritableDir(report, 'the report folder');
  const cacheDir = path.resolve(options.cacheDir ?? path.join(report, '.cache'));
  ensureWritableDir(cacheDir, 'the cache folder');

  // Closed last-opened first, every part whatever the others do.
  const opened: [string, () => unknown][] = [];
  const close = { add: (part: string, cleanup: () => unknown) => opened.unshift([part, cleanup]) };
  try {
    const executor = createSqlPool({ size: config.sqlWorkers });
    close.add('the SQL workers', () => executor.close());
    const store = new RunStore({ dir: cacheDir, read: config.cache });
    close.add('the run store', async () => {
      await store.flush();
      store.close();
    });
    const replyCache = new SqliteLlmCache(path.join(cacheDir, 'llm-cache.sqlite'));
    close.add('the reply cache', () => replyCache.close());
    const usage = new UsageMeter(config.llm?.prices ?? {});
    const index = new NeighbourIndex(dataset.items);
    const models = await Promise.all(
      options.models.map((id) =>
        resolveModel(id, { config, index, cache: replyCache, usage, extra: options.extraModels }),
      ),
    );
    const environment: EnvironmentOptions = {
      executor,
      databases,
      pool: dataset.pool,
      timeoutMs: config.executeTimeoutMs,
    };
    if (dataset.formulation === 'rest') {
      const server = await serveEndpoints(dataset, databases, executor, config);
      close.add('the REST server', () => server.close());
      environment.restUrl = server.url;
      environment.restPaths = new Map(
        [...dataset.databases].map(([db, { endpoints }]) => [
          db,
          new Map((endpoints ?? []).map((e) => [e.operationId, e.path])),
        ]),
      );
    }

    const settings = (model: EvalModel): PromptSettings => ({
      family: model.family,
      tools: options.tools,
      mode: options.mode,
      budget: options.budget,
    });
    const settingsKey = {
      mode: options.mode,
      tools: options.tools,
      shots: options.shots,
      budget: options.budget,
      obfuscate: options.obfuscate,
      shortlist: options.shortlist,
    };
    // What SQL that reads the clock was pinned to when the dataset was generated (the SQL baseline's queries see the same moment).
    const referenceTime = dataset.referenceTime ?? config.referenceTime;
    const stage: CachedStage<AttemptJob, AttemptRecord, StageContext, string> = {
      name: EVAL_STAGE,
      version: 1,
      cacheKey: (job) => ({
        item: job.item.hash,
        key: job.item.key,
        model: job.modelKey,
        settings: settingsKey,
        prompt: promptSource(settings(job.model)),
        examples: job.examples.map((e) => e.hash),
        repeat: job.repeat,
        kind: job.kind,
        ...(job.kind === 'sql' ? { referenceTime, sqlPrompt: sqlPromptSource() } : {}),
      }),
      run: async (job) => {
        if (job.kind === 'sql') {
          const db = databases.get(job.item.db) as DatabaseInfo;
          const record = await runSqlAttempt({
            item: job.item,
            model: job.model,
            db,
            executor,
            timeoutMs: config.executeTimeoutMs,
            referenceTime,
            repeat: job.repeat,
          });
          return accept(record);
        }
        const view = toolView(job.item.tools, job.item.goldCalls, job.item.key, options);
        const episode = await openEpisode(job.item, environment);
        const record = await runAttempt({
          item: job.item,
          model: job.model,
          view,
          examples: job.examples,
          settings: settings(job.model),
          episode,
          repeat: job.repeat,
        });
        return accept(record);
      },
    };
    const runner = new StageRunner(store, retryPolicyOf(config), undefined, codeFingerprint([...CODE_DIRS, 'eval']));
    const jobs: AttemptJob[] = models.flatMap(({ model, key }) =>
      dataset.items.flatMap((item) => {
        const examples =
          options.tools === 'native' || item.formulation === 'rest' ? [] : index.neighbours(item, options.shots);
        const kinds: AttemptJob['kind'][] = options.sqlBaseline ? ['tools', 'sql'] : ['tools'];
        return kinds.flatMap((kind) =>
          Array.from({ length: options.repeats }, (_, repeat) => ({
            item,
            model,
            modelKey: key,
            repeat,
            examples: kind === 'sql' ? [] : examples,
            kind,
          })),
        );
      }),
    );
    const limit = pLimit(config.concurrency);
    let done = 0;
    const lines = await Promise.all(
      jobs.map((job) =>
        limit(async (): Promise<ResultLine | undefined> => {
          if (options.signal?.aborted) return undefined;
          const ctx: StageContext = { config, db: databases.get(job.item.db) as DatabaseInfo, executor };
          const outcome = await runner.run(stage, job, ctx);
          options.onProgress?.(++done, jobs.length);
          return lineOf(job, outcome.ok ? outcome.value : null, outcome.ok ? undefined : outcome);
        }),
      ),
    );
    const aborted = lines.some((l) => l === undefined);
    const complete = lines.filter((l): l is ResultLine => l !== undefined);
    const summary = summarize(complete, {
      dataset: dataset.datasetName,
      formulation: dataset.formulation,
      settings: { ...settingsKey, repeats: options.repeats, limit: options.limit ?? null, nl2api: packageVersion() },
    });
    const files = aborted ? [] : await writeReport(report, complete, summary);
    return { summary, lines: complete, files, usage: usage.snapshot(), aborted };
  } finally {
    const cleanups = new Cleanups();
    for (const [part, cleanup] of opened) await cleanups.run(part, cleanup);
    cleanups.throwIfFailed('closing the evaluation');
  }
}

function lineOf(
  job: AttemptJob,
  attempt: AttemptRecord | null,
  failure?: { category: string; message: string },
): ResultLine {
  const { item } = job;
  return {
    model: job.model.id,
    item: item.key,
    id: item.id,
    db: item.db,
    formulation: item.formulation,
    difficulty: item.difficulty,
    constructs: item.constructs,
    repeat: job.repeat,
    kind: job.kind,
    question: item.question,
    evidence: item.evidence,
    goldCalls: item.goldCalls,
    attempt,
    ...(failure ? { failure: { category: failure.category, message: failure.message } } : {}),
  };
}

/** The source's databases, each as it was when the dataset was generated (else its answers no longer hold). */
async function openDatabases(source: string, dataset: EvalDataset): Promise<Map<string, DatabaseInfo>> {
  const loaded = await loadSource(source, { dbIds: [...dataset.databases.keys()] }).catch((error: Error) => {
    throw new DatasetError(error.message);
  });
  const databases = new Map(loaded.databases.map((db) => [db.dbId, db]));
  for (const [dbId, { fingerprint }] of dataset.databases) {
    const db = databases.get(dbId);
    if (!db) throw new DatasetError(`${source} has no database ${dbId}`);
    if (db.fingerprint !== fingerprint)
      throw new DatasetError(`${dbId}: the database changed since the dataset was generated; generate it again`);
  }
  return databases;
}

async function serveEndpoints(
  dataset: EvalDataset,
  databases: ReadonlyMap<string, DatabaseInfo>,
  executor: SqlExecutor,
  config: Config,
): Promise<RestServer> {
  return createRestServer({
    databases: [...dataset.databases].map(([db, { endpoints }]) => ({
      db: databases.get(db) as DatabaseInfo,
      endpoints: endpoints ?? [],
    })),
    executor,
    timeoutMs: config.executeTimeoutMs,
    title: `${dataset.datasetName} REST API`,
    version: packageVersion(),
    maxStringLength: config.rest.maxStringLength,
  });
}

interface ModelDeps {
  config: Config;
  index: NeighbourIndex;
  cache: SqliteLlmCache;
  usage: UsageMeter;
  extra?: Record<string, EvalModel>;
}

/** A `--model` value as a model, and what of it goes into the results' keys. */
export async function resolveModel(id: string, deps: ModelDeps): Promise<{ model: EvalModel; key: unknown }> {
  const extra = deps.extra?.[id];
  if (extra) return { model: extra, key: id };
  if (id === 'oracle') return { model: oracleModel(), key: id };
  if (id === 'baseline:knn') return { model: knnModel(deps.index), key: id };
  const spec = parseModelId(id);
  const llm = LlmConfigSchema.parse({
    ...deps.config.llm,
    provider: spec.provider,
    model: spec.model,
    ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}),
  });
  const client = new LlmClient({
    model: await createChatModel(llm),
    config: llm,
    cache: deps.cache,
    usage: deps.usage,
  });
  const key = {
    provider: llm.provider,
    model: llm.model,
    baseUrl: llm.baseUrl ?? null,
    temperature: llm.temperature,
    maxTokens: llm.maxTokens ?? null,
  };
  return { model: llmModel(id, client, spec.model), key };
}

/** `<provider>:<model>[@<base url>]`, e.g. `mistral:mistral-large-latest`, `openai:qwen2.5@http://127.0.0.1:8000/v1`. */
export function parseModelId(id: string): { provider: LlmProvider; model: string; baseUrl?: string } {
  const match = /^([a-z]+):([^@]+)(?:@(.+))?$/.exec(id);
  const provider = match?.[1] as LlmProvider | undefined;
  if (!match || !provider || !PROVIDER_NAMES.includes(provider))
    throw new DatasetError(
      `unknown model ${JSON.stringify(id)}: oracle, baseline:knn, or <provider>:<model>[@<base url>] with provider ${PROVIDER_NAMES.join(', ')}`,
    );
  return { provider, model: match[2], ...(match[3] ? { baseUrl: match[3] } : {}) };
}
