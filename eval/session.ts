import path from 'node:path';
import type { Config } from '../config/schema.js';
import { callsRest, type DatabaseInfo, type Formulation } from '../core/model.js';
import { accept } from '../core/outcome.js';
import { packageVersion } from '../core/package-root.js';
import type { LlmCache } from '../generators/llm/cache.js';
import { createChatModel } from '../generators/llm/chat-model.js';
import { LlmClient } from '../generators/llm/client.js';
import { describeLimits, llmLimits } from '../generators/llm/limits.js';
import { LlmConfigSchema, type LlmConfig, type LlmProvider } from '../generators/llm/config.js';
import { PROVIDER_NAMES } from '../generators/llm/providers.js';
import type { RateLimiter } from '../generators/llm/rate-limiter.js';
import { UsageMeter } from '../generators/llm/usage.js';
import { codeFingerprint, CODE_DIRS } from '../pipeline/code-fingerprint.js';
import { retryPolicyOf } from '../pipeline/runner/retry.js';
import { StageRunner } from '../pipeline/runner/stage-runner.js';
import type { CachedStage, StageContext } from '../pipeline/stage.js';
import type { OutcomeStore } from '../pipeline/store/outcome-store.js';
import { runAttempt, type AttemptRecord } from './attempt.js';
import { DatasetError, loadEvalDataset, type EvalDataset, type EvalItem } from './dataset.js';
import { openEpisode } from './environment.js';
import { openLiveTools } from './live-tools.js';
import { NeighbourIndex } from './models/knn.js';
import { knnModel, llmModel, oracleModel, type EvalModel } from './models/model.js';
import { promptSource, type PromptSettings } from './prompts.js';
import { runSqlAttempt, sqlPromptSource } from './sql-baseline.js';
import { predictionsModel } from './predictions/model.js';
import type { PredictionFormat } from './predictions/formats.js';
import { readPredictions, type Predictions } from './predictions/read.js';
import { withNl2apiKeys } from './predictions/vakra-keys.js';
import { isOtherFormulationUuid, vakraUuid } from './predictions/vakra-uuid.js';
import type { PredictionsReport, ResultLine, SummaryHeader } from './summary.js';
import { toolView } from './tool-view.js';

/**
 * An evaluation's working state, whoever schedules its attempts (the in-process runner,
 * run.ts; queue workers, queue-run.ts): the dataset's items, the databases and live tools, the
 * models, and the list of attempts (model × item × kind × repeat, in a fixed order, so an
 * index names the same attempt in every process). Each attempt is the cached stage
 * `eval.attempt`, run through a StageRunner over the run's store: keyed by the item's
 * content, the model, the settings, the prompt templates and the code (the pipeline's
 * folders and eval/).
 */

/** What defines an evaluation: `nl2api eval`'s options, all plain JSON (a queue run stores them for its workers). */
export interface EvalSettings {
  /** The run's config (`--config`, flags): SQL workers, concurrency, LLM limits, retries, the source. */
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
  /** The run's name on a report (`--name`; default: model, mode and tools). */
  name?: string;
  /** Score another agent's calls instead of asking models (`--predictions`, `--predictions-format`). */
  predictions?: { path: string; format: PredictionFormat };
}

/** Where attempts and replies are kept: on disk for a run in process, in Redis for a queue run (shared by all workers). */
export interface SessionStores {
  store: OutcomeStore;
  replyCache: LlmCache;
  /** Held by every worker of a queue run (default: each LLM client its own). */
  rateLimiter?: (llm: LlmConfig) => RateLimiter;
}

export interface AttemptJob {
  item: EvalItem;
  model: EvalModel;
  modelKey: unknown;
  repeat: number;
  /** `sql`: the SQL baseline's attempt at the item. */
  kind: 'tools' | 'sql';
}

export interface EvalSession {
  readonly dataset: EvalDataset;
  readonly jobs: readonly AttemptJob[];
  readonly usage: UsageMeter;
  /** Per LLM model, the request limits its client applies (limits.ts), as a run prints them. */
  readonly limits: readonly string[];
  /**
   * Attempts to run at once in process: the run's concurrency; twice it when a model server is
   * asked, so that while some attempts run their tool calls others have their requests in
   * flight (the client's in-flight limit, not the attempts, keeps the server at its load).
   */
  readonly attemptsInFlight: number;
  /** The summary's header: dataset, formulation, settings. */
  readonly header: SummaryHeader;
  /** A runner over the session's store; `computeMisses: false` only reads (a queue driver assembling). */
  runner(computeMisses?: boolean): StageRunner;
  /** Attempt `index` through `runner`: its result line (a fault of the run: a failure line, not cached). */
  attempt(index: number, runner: StageRunner): Promise<ResultLine>;
  /** The store key of attempt `index`. */
  keyOf(index: number, runner: StageRunner): string;
  close(): Promise<void>;
}

export const EVAL_STAGE = 'eval.attempt';

export async function openEvalSession(
  settings: EvalSettings,
  stores: SessionStores,
  extraModels?: Record<string, EvalModel>,
): Promise<EvalSession> {
  const { config } = settings;
  if (settings.predictions && (settings.sqlBaseline || settings.obfuscate || settings.shortlist < 100))
    throw new DatasetError(
      '--predictions replays the calls an agent made with the tools it had: no --sql-baseline, --obfuscate or --shortlist',
    );
  if (!config.source)
    throw new DatasetError('no source given (--source <dir>): the databases the dataset was generated from');
  const dataset = await loadEvalDataset(settings.dataset, {
    formulation: settings.formulation,
    dbIds: config.dbIds,
    limit: settings.limit,
  });
  const usage = new UsageMeter(config.llm?.prices ?? {});
  const index = new NeighbourIndex(dataset.items);
  // The models (an LLM's client loads its provider's SDK, ~0.5 s) while the SQL workers start.
  const replaying = settings.predictions ? replayedAgent(settings.predictions, dataset.items) : undefined;
  const resolving = replaying
    ? replaying.then((replay) => [replay.model])
    : Promise.all(settings.models.map((id) => resolveModel(id, { config, index, stores, usage, extra: extraModels })));
  // Handled here, awaited below: a model that cannot be made (a bad id, no key) must not be an unhandled rejection while the workers start.
  resolving.catch(() => undefined);
  const live = await openLiveTools(dataset, config.source, config);
  const { databases, environment } = live;
  const { executor } = environment;
  try {
    const replay = await replaying;
    const models = await resolving;
    const promptSettings = (model: EvalModel): PromptSettings => ({
      family: model.family,
      tools: settings.tools,
      mode: settings.mode,
      budget: settings.budget,
    });
    const settingsKey = {
      mode: settings.mode,
      tools: settings.tools,
      shots: settings.shots,
      // Only an agent has turns to count.
      budget: settings.mode === 'react' ? settings.budget : null,
      obfuscate: settings.obfuscate,
      shortlist: settings.shortlist,
    };
    // In-context examples go only into a SLOT/SEL prompt that lists the tools. Found when an
    // attempt is keyed or run, not all before the first one starts (an item's ranking is
    // worked out once, for every model and repeat: NeighbourIndex).
    const examplesOf = (job: AttemptJob): EvalItem[] =>
      job.kind === 'sql' || settings.tools === 'native' || callsRest(job.item.formulation)
        ? []
        : index.neighbours(job.item, settings.shots);
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
        prompt: promptSource(promptSettings(job.model)),
        examples: examplesOf(job).map((e) => e.hash),
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
        const view = toolView(job.item.tools, job.item.goldCalls, job.item.key, settings);
        const episode = await openEpisode(job.item, environment);
        const record = await runAttempt({
          item: job.item,
          model: job.model,
          view,
          examples: examplesOf(job),
          settings: promptSettings(job.model),
          episode,
          repeat: job.repeat,
        });
        return accept(record);
      },
    };
    const jobs: AttemptJob[] = models.flatMap(({ model, key }) =>
      dataset.items.flatMap((item) => {
        const kinds: AttemptJob['kind'][] = settings.sqlBaseline ? ['tools', 'sql'] : ['tools'];
        return kinds.flatMap((kind) =>
          Array.from({ length: settings.repeats }, (_, repeat) => ({ item, model, modelKey: key, repeat, kind })),
        );
      }),
    );
    const contextOf = (job: AttemptJob): StageContext => ({
      config,
      db: databases.get(job.item.db) as DatabaseInfo,
      executor,
    });
    const code = codeFingerprint([...CODE_DIRS, 'eval']);
    return {
      dataset,
      jobs,
      usage,
      limits: models.flatMap(({ model, limits }) => (limits ? [`${model.id}: ${limits}`] : [])),
      attemptsInFlight: models.some((m) => m.limits !== undefined) ? 2 * config.concurrency : config.concurrency,
      header: {
        ...(settings.name ? { name: settings.name } : {}),
        ...(replay ? { predictions: replay.report } : {}),
        dataset: dataset.datasetName,
        formulation: dataset.formulation,
        settings: {
          ...settingsKey,
          // In-context examples go only into a SLOT/SEL prompt that lists the tools.
          shots: settings.tools === 'native' || callsRest(dataset.formulation) ? null : settings.shots,
          repeats: settings.repeats,
          limit: settings.limit ?? null,
          nl2api: packageVersion(),
        },
      },
      runner: (computeMisses = true) =>
        new StageRunner(stores.store, retryPolicyOf(config), undefined, code, computeMisses),
      attempt: async (i, runner) => {
        const job = jobs[i];
        const outcome = await runner.run(stage, job, contextOf(job));
        return lineOf(job, outcome.ok ? outcome.value : null, outcome.ok ? undefined : outcome);
      },
      keyOf: (i, runner) => runner.keyOf(stage, jobs[i], contextOf(jobs[i])),
      close: () => live.close(),
    };
  } catch (error) {
    await live.close();
    throw error;
  }
}

/**
 * `--predictions`: the agent as a model that replays its calls, and what its file held
 * against the items evaluated (missing items are scored as not completed).
 */
async function replayedAgent(
  given: NonNullable<EvalSettings['predictions']>,
  items: readonly EvalItem[],
): Promise<{ model: { model: EvalModel; key: unknown; limits?: string }; report: PredictionsReport }> {
  const predictions = await readPredictions(given.path, given.format);
  if (given.format === 'vakra') keyByItemId(predictions, items);
  const ids = new Set(items.map((item) => item.id));
  const report: PredictionsReport = {
    path: given.path,
    format: given.format,
    read: predictions.calls.size,
    missing: items.filter((item) => !predictions.calls.has(item.id)).map((item) => item.id),
    unknown: [...predictions.calls.keys()].filter((id) => !ids.has(id)),
    duplicates: predictions.duplicates,
    invalid: predictions.invalid,
  };
  const id = `predictions:${path.basename(path.resolve(given.path))}`;
  return { model: { model: predictionsModel(id, predictions), key: { predictions: predictions.hash } }, report };
}

/**
 * VAKRA records name their item by the uuid nl2api's export gave it (or, written by another
 * tool, by the sample id): each keyed by its item's id, its keys put in nl2api's
 * (vakra-keys.ts); another formulation's are not this run's.
 */
function keyByItemId(predictions: Predictions, items: readonly EvalItem[]): void {
  const byUuid = new Map(items.map((item) => [vakraUuid(item), item.id]));
  const byId = new Map(items.map((item) => [item.id, item]));
  const formulation = items[0]?.formulation ?? '';
  for (const [uuid, calls] of [...predictions.calls]) {
    const id = byUuid.get(uuid) ?? (byId.has(uuid) ? uuid : undefined);
    if (id === undefined && !isOtherFormulationUuid(uuid, formulation)) continue;
    predictions.calls.delete(uuid);
    if (id !== undefined) predictions.calls.set(id, withNl2apiKeys(calls, byId.get(id)!));
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

interface ModelDeps {
  config: Config;
  index: NeighbourIndex;
  stores: SessionStores;
  usage: UsageMeter;
  extra?: Record<string, EvalModel>;
}

/** A `--model` value as a model, and what of it goes into the results' keys. */
export async function resolveModel(
  id: string,
  deps: ModelDeps,
): Promise<{ model: EvalModel; key: unknown; limits?: string }> {
  const extra = deps.extra?.[id];
  if (extra) return { model: extra, key: id };
  if (id === 'oracle') return { model: oracleModel(), key: id };
  if (id === 'baseline:knn') return { model: knnModel(deps.index), key: id };
  const spec = parseModelId(id);
  const llm = withRunConcurrency(
    LlmConfigSchema.parse({
      ...deps.config.llm,
      provider: spec.provider,
      model: spec.model,
      ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}),
    }),
    deps.config.concurrency,
  );
  const client = new LlmClient({
    model: await createChatModel(llm),
    config: llm,
    cache: deps.stores.replyCache,
    usage: deps.usage,
    ...(deps.stores.rateLimiter ? { rateLimiter: deps.stores.rateLimiter(llm) } : {}),
  });
  const key = {
    provider: llm.provider,
    model: llm.model,
    baseUrl: llm.baseUrl ?? null,
    temperature: llm.temperature,
    maxTokens: llm.maxTokens ?? null,
  };
  return { model: llmModel(id, client, spec.model), key, limits: describeLimits(llm) };
}

/**
 * A server on this machine has no in-flight limit of its own (limits.ts): without a setting,
 * the run's concurrency is the requests it gets at once. Attempts run at twice that
 * (`attemptsInFlight`), so an attempt running its tool calls does not leave the server a
 * request short. Not part of the results' keys: it changes when replies come, not what they say.
 */
function withRunConcurrency(llm: LlmConfig, concurrency: number): LlmConfig {
  return llm.concurrency === undefined && llmLimits(llm).local ? { ...llm, concurrency } : llm;
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
