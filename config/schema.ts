import { z } from 'zod';
import { FORMULATIONS } from '../core/model.js';
import { LlmConfigSchema } from '../generators/llm/config.js';

/**
 * Every knob of a pipeline run, with its default. The JSON config file (`--config`) and the
 * CLI flags are validated against this one schema (config/load.ts merges them).
 */

export const FormulationSchema = z.enum(FORMULATIONS);
/** What `generate` makes without `--formulations`: chain is asked for by name. */
export const DEFAULT_FORMULATIONS = ['slot', 'sel', 'rest'] as const;

/** The chain formulation (generators/chain): how hard to look for chains, and who writes their questions. */
export const ChainConfigSchema = z
  .object({
    /** Continuations tried per first hop and chain length (links that make no single value aside). */
    attempts: z.number().int().min(1).max(100).default(6),
    /** Chains kept per first hop and chain length. */
    perFirst: z.number().int().min(1).max(20).default(2),
    /**
     * Who writes a chain's question: `auto` = the LLM when `llm` is configured, else the
     * deterministic template (the LLM's fallback too).
     */
    writer: z.enum(['auto', 'template', 'llm']).default('auto'),
    /** With an LLM writer: also have the model judge each question faithful to its chain. */
    judge: z.boolean().default(false),
  })
  .strict();

/**
 * `nl2api serve`'s SQL lanes (issue 14): every query starts in the fast lane; one using
 * `fastBudgetMs` of CPU time (not wall time: waiting for a CPU on a busy machine does not count)
 * is stopped and its statement served by the slow lane from then on (until `promoteAfter`
 * consecutive runs there within the budget); at most `recyclesPerMinute` workers are killed so
 * (beyond, the statement finishes where it is). The fast lane has `sqlWorkers` workers; each
 * lane a spare; past a lane's `*MaxInFlight` queries, 503 with Retry-After.
 */
export const ServeLanesConfigSchema = z
  .object({
    fastBudgetMs: z.number().int().min(1).default(40),
    promoteAfter: z.number().int().min(1).default(8),
    slowWorkers: z.number().int().min(1).max(256).default(2),
    fastMaxInFlight: z.number().int().min(1).default(256),
    slowMaxInFlight: z.number().int().min(1).default(64),
    recyclesPerMinute: z.number().int().min(0).default(30),
  })
  .strict();

/** The REST formulation's knobs (issue 3). */
export const RestConfigSchema = z
  .object({
    /**
     * Who proposes endpoints: `auto` = the LLM agent when `llm` is configured, else the
     * deterministic template synthesizer.
     */
    synthesizer: z.enum(['auto', 'template', 'llm']).default('auto'),
    /** Synthesis attempts per instance in the verify-and-retry loop (each failure is fed back). */
    attempts: z.number().int().min(1).max(10).default(2),
    /** After the LLM's last failed attempt, try the template synthesizer before rejecting. */
    templateFallback: z.boolean().default(true),
    /** Instances per LLM synthesis call. */
    batchSize: z.number().int().min(1).max(50).default(4),
    /** With an LLM: judge responses the deterministic comparison cannot decide. */
    judge: z.boolean().default(true),
    /** With an LLM: let the de-duplication agent propose merges (each verified by execution). */
    dedupAgent: z.boolean().default(true),
    /** Longest string parameter the server accepts. */
    maxStringLength: z.number().int().min(1).max(100_000).default(1000),
    /**
     * A proposed endpoint's trial run (rest.synthesize) may take this many times as long as
     * its question's gold SQL took, and at least `trialMinMs`, at most `executeTimeoutMs`: so
     * that neither a sloppy nor a hostile model stalls a run with runaway queries. The floor is
     * twice the longest honest trial measured on BIRD dev (238 ms running, p99 116 ms, on a
     * loaded 2-core machine; a trial's clock starts when a SQL worker takes it, not in the queue).
     */
    trialTimeoutFactor: z.number().min(1).default(20),
    trialMinMs: z.number().int().min(1).default(500),
    /**
     * Per-query time limit of `nl2api serve`: an interactive API answers in seconds or says it
     * cannot (504). The pipeline's own calls keep `executeTimeoutMs`.
     */
    serveTimeoutMs: z.number().int().min(1).default(5000),
    /** Queries `nl2api serve` admits at once; past them, 503 with Retry-After (never an unbounded queue). */
    serveMaxInFlight: z.number().int().min(1).default(256),
    /** How `nl2api serve` keeps cheap queries from waiting behind expensive ones (runtime/sql/lanes.ts). */
    serveLanes: ServeLanesConfigSchema.default(ServeLanesConfigSchema.parse({})),
  })
  .strict();
export type RestConfig = z.infer<typeof RestConfigSchema>;

/** The queue backend (issue 4): absent, the in-process runner. */
export const QueueConfigSchema = z
  .object({
    /** Redis URL, e.g. redis://127.0.0.1:6379. */
    url: z.string().min(1),
    /** Key prefix of the queues, the store, the LLM cache and the run registry in Redis. */
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .default('nl2api'),
    /** The driver also works on its run (false: only enqueue and wait for `nl2api worker`s). */
    localWorkers: z.boolean().default(true),
    /** Jobs in flight per stage group in the driver's own workers. */
    concurrency: z.number().int().min(1).max(1024).default(8),
    /** Attach to this run (a restarted driver resumes it); default: a new run id. */
    runId: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .optional(),
    /** Tries of a job (a crash, a fault) before it is a rejection. */
    attempts: z.number().int().min(1).max(100).default(3),
    /** A job whose worker died is taken back after this long. */
    lockDurationMs: z.number().int().min(1000).default(30_000),
    /** How often the driver polls the barriers and progress. */
    pollMs: z.number().int().min(10).default(200),
  })
  .strict();
export type QueueConfig = z.infer<typeof QueueConfigSchema>;

/** Differential verification and what counts as a sample worth keeping (issue 11). */
export const VerificationConfigSchema = z
  .object({
    /**
     * Database variants every accepted sample must also agree with the gold on: the first
     * reads the same rows in another order; each further one permutes the values of the
     * tables a question touches (seeded). 0 turns differential verification off.
     */
    variants: z.number().int().min(0).max(8).default(2),
    /** Seed of the first value-perturbed variant (the next ones count up from it). */
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .default(1),
    /**
     * Gold whose answer depends on the physical row order (ties under ORDER BY … LIMIT, …):
     * `reject` it (`gold:nondeterministic`), or `accept` it with every answer seen, any of
     * which a sample (and an evaluated model) may give.
     */
    nondeterministicGold: z.enum(['reject', 'accept']).default('reject'),
    /** `drop`: reject samples whose gold does not discriminate (`gold:weak:<strength>`); `keep`: only flag them. */
    weakGold: z.enum(['keep', 'drop']).default('keep'),
    /**
     * A table of more rows than this is sampled down to about this many in a value-perturbed
     * variant (rows drawn by a seeded hash of a key, a row's parent with it: variant-table.ts):
     * every statement of a question runs there too, so on large data the variant costs what
     * the same statements cost on a database of this size. Smaller tables are copied whole.
     */
    variantRows: z.number().int().min(1).default(10_000),
    /** Building one variant table (a copy of one table with its values permuted) may take this long. */
    buildTimeoutMs: z.number().int().min(1).default(600_000),
    /** Where the variant tables are kept; `<cache>/variants` when absent. */
    dir: z.string().min(1).optional(),
  })
  .strict();
export type VerificationConfig = z.infer<typeof VerificationConfigSchema>;

/** A fixed moment, so that a default run gives the same samples on any day. */
/** `nl2api eval`'s defaults: the CLI's, a config's `evaluate` block's and the benchmark's. */
export const EVAL_DEFAULTS = {
  mode: 'direct',
  tools: 'prompt',
  /** In-context examples (SLOT/SEL, tools in the prompt). */
  shots: 3,
  repeats: 1,
  /** ReAct turns. */
  budget: 10,
  obfuscate: false,
  /** Percent of the tool universe shown. */
  shortlist: 100,
} as const;

/**
 * Models to evaluate on each generated output (`nl2api generate` afterwards, and every
 * scheduled run: the version's diff then shows the metric changes next to the dataset's).
 * Absent: nothing is evaluated. The options are `nl2api eval`'s.
 */
export const EvaluateConfigSchema = z
  .object({
    /** `oracle`, `baseline:knn`, `<provider>:<model>[@<base url>]` (LLM limits from `llm`). */
    models: z.array(z.string().min(1)).min(1),
    /** Default: every formulation the run generates. */
    formulations: z.array(FormulationSchema).min(1).optional(),
    mode: z.enum(['direct', 'react']).default(EVAL_DEFAULTS.mode),
    tools: z.enum(['prompt', 'native']).default(EVAL_DEFAULTS.tools),
    shots: z.number().int().min(0).default(EVAL_DEFAULTS.shots),
    repeats: z.number().int().min(1).default(EVAL_DEFAULTS.repeats),
    budget: z.number().int().min(1).default(EVAL_DEFAULTS.budget),
    /** At most this many items per database. */
    limit: z.number().int().min(1).optional(),
    sqlBaseline: z.boolean().default(false),
  })
  .strict();
export type EvaluateConfig = z.infer<typeof EvaluateConfigSchema>;

/** `nl2api export`'s defaults: the CLI's and a config's `export` block's. */
export const EXPORT_DEFAULTS = {
  formats: ['nl2api', 'openai', 'hermes', 'xlam', 'live-api-bench', 'vakra', 'hf'],
  /** `by-database`: no database in two splits (a benchmark's default); `by-question`: stratified by database and difficulty; `none`: all in `train`. */
  split: 'by-database',
  shares: { train: 0.8, validation: 0.1, test: 0.1 },
  seed: 42,
  /** Share of questions that also get a negative variant (no tool answers it: no call, a refusal). */
  negatives: 0.1,
  /** REST: endpoints offered per example (the gold's and others of its database drawn per item); 0: every endpoint of the database. */
  restTools: 10,
  /**
   * Rows (or values) of a tool's output a conversation shows, then `more: true`. Evaluation
   * shows models 20; intermediate tables are whole joined rows, and 5 keep a SLOT
   * conversation a few thousand tokens shorter per call.
   */
  rows: 5,
  encoding: 'o200k_base',
  /** Word-set Jaccard similarity at which two questions count as near-duplicates in the leakage report. */
  nearDuplicate: 0.8,
  /** With `maxTokens`: leave the examples over it out (else they are only reported). */
  dropOver: false,
  /** How Live API-Bench's SLOT/SEL files are laid out (export/live-api-bench-layouts.ts): `records`, `builder` or `m3`. */
  liveApiBenchLayout: 'records',
  /** The pandas Live API-Bench's runtime runs on, for the order of a join's rows: `2.2` and later, or `1.5` (before 2.2). */
  liveApiBenchPandas: '2.2',
} as const;

/**
 * Live API-Bench's SLOT/SEL file layouts: `records` (one array per database, `initialization_step`
 * apart, trimmed tools), `builder` (IBM/live-api-bench's builder output: the init call first in
 * `output`, `key_values_and_descriptions`, no tools), `m3` (IBM/m3-train-eval's reader:
 * `slot_filling_bird_<db>.json` / `sequencing_bird_<db>.json`, `{"data": [...]}`, full tool specs).
 */
export const LIVE_API_BENCH_LAYOUTS = ['records', 'builder', 'm3'] as const;
export type LiveApiBenchLayout = (typeof LIVE_API_BENCH_LAYOUTS)[number];

/**
 * The pandas Live API-Bench's runtime merges its starting table with (export/published/
 * pandas-reading.ts): from 2.2 an inner merge keeps the left table's row order; before, it
 * groups the rows by join key. The order of an answer of several columns depends on it.
 */
export const LIVE_API_BENCH_PANDAS = ['2.2', '1.5'] as const;
export type LiveApiBenchPandas = (typeof LIVE_API_BENCH_PANDAS)[number];

/** A config's `export` block: `nl2api export`'s settings, each overridden by its flag. */
export const ExportConfigSchema = z
  .object({
    formats: z.array(z.enum(EXPORT_DEFAULTS.formats)).min(1).optional(),
    split: z.enum(['by-database', 'by-question', 'none']).optional(),
    shares: z
      .object({ train: z.number().min(0), validation: z.number().min(0), test: z.number().min(0) })
      .strict()
      .refine((s) => s.train + s.validation + s.test > 0, 'the split shares add up to more than 0')
      .optional(),
    seed: z.number().int().optional(),
    negatives: z.number().min(0).max(1).optional(),
    restTools: z.number().int().min(0).optional(),
    rows: z.number().int().min(1).max(20).optional(),
    encoding: z.enum(['o200k_base', 'cl100k_base']).optional(),
    nearDuplicate: z.number().gt(0).max(1).optional(),
    /** Token budget of one example (training formats): those over it are reported, per format and formulation. */
    maxTokens: z.number().int().min(1).optional(),
    dropOver: z.boolean().optional(),
    liveApiBenchLayout: z.enum(LIVE_API_BENCH_LAYOUTS).optional(),
    liveApiBenchPandas: z.enum(LIVE_API_BENCH_PANDAS).optional(),
  })
  .strict();
export type ExportConfig = z.infer<typeof ExportConfigSchema>;

export const DEFAULT_REFERENCE_TIME = '2026-01-01 00:00:00';

export const ConfigSchema = z
  .object({
    /** Dataset source directory (BIRD layout or generic JSONL + SQLite dir). */
    source: z.string().min(1).optional(),
    /** The samples' `dataset_name` (default: derived from the source, e.g. `bird-dev`). */
    datasetName: z.string().min(1).optional(),
    /**
     * The output's license, a Hugging Face license id (`cc-by-sa-4.0`, `mit`, …), for a source
     * that states none or states it wrongly; by default the source's own (pipeline/sources/license.ts).
     */
    license: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.+-]*$/)
      .optional(),
    /** Restrict the run to these databases (all when absent). */
    dbIds: z.array(z.string().min(1)).min(1).optional(),
    formulations: z
      .array(FormulationSchema)
      .min(1)
      .default([...DEFAULT_FORMULATIONS])
      .refine((list) => !list.includes('chain') || list.includes('rest'), {
        message: "chain composes the REST formulation's endpoints: list rest with it",
      }),
    /** `paper` reproduces the paper's 7 SLOT tools; `extended` adds our extensions. */
    pool: z.enum(['extended', 'paper']).default('extended'),
    /** Items in flight at once in the in-process runner. */
    concurrency: z.number().int().min(1).max(1024).default(8),
    /** SQL worker processes (killable, so timeouts really stop a query). */
    sqlWorkers: z.number().int().min(1).max(256).default(2),
    /** Retries of a stage that threw a TransientError (0 = no retry). */
    retries: z.number().int().min(0).max(100).default(3),
    backoff: z
      .object({
        /** First retry delay; doubled per attempt, with jitter, capped at maxMs. */
        baseMs: z.number().int().min(0).default(100),
        maxMs: z.number().int().min(0).default(5000),
      })
      .strict()
      .default({ baseMs: 100, maxMs: 5000 }),
    goldTimeoutMs: z.number().int().min(1).default(30_000),
    /**
     * The moment SQLite's clock reads ('now', CURRENT_TIMESTAMP, …) in the gold SQL, the calls
     * and the endpoints, UTC: fixed, so that questions about "today" give the same samples on
     * every run (generators/sql/clock.ts).
     */
    referenceTime: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'a UTC time as YYYY-MM-DD HH:MM:SS')
      .default(DEFAULT_REFERENCE_TIME),
    executeTimeoutMs: z.number().int().min(1).default(30_000),
    /** Output directory. */
    out: z.string().min(1).default('output'),
    /** Run store / cache directory; `<out>/.cache` when absent. */
    cacheDir: z.string().min(1).optional(),
    /** false: recompute everything (results are still written to the cache). */
    cache: z.boolean().default(true),
    /**
     * Trust a database file's remembered content hash while its size and mtime are unchanged
     * (false: hash every database file on every run).
     */
    fingerprintCache: z.boolean().default(true),
    rest: RestConfigSchema.default(RestConfigSchema.parse({})),
    chain: ChainConfigSchema.default(ChainConfigSchema.parse({})),
    verification: VerificationConfigSchema.default(VerificationConfigSchema.parse({})),
    /** The LLM (synthesis agent, judge, dedup agent); absent: no LLM is used at all. */
    llm: LlmConfigSchema.optional(),
    queue: QueueConfigSchema.optional(),
    evaluate: EvaluateConfigSchema.optional(),
    export: ExportConfigSchema.optional(),
    /** `auto`: progress bars on a TTY, periodic log lines otherwise. */
    progress: z.enum(['auto', 'bar', 'log', 'none']).default('auto'),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;
/** What the file and the flags may contain before defaults are applied. */
export type ConfigInput = z.input<typeof ConfigSchema>;

/**
 * The part of the config that changes what is generated (not where, not how fast): its
 * hash goes into the manifest.
 */
export function outputRelevantConfig(config: Config): Record<string, unknown> {
  return {
    datasetName: config.datasetName ?? null,
    formulations: config.formulations,
    pool: config.pool,
    goldTimeoutMs: config.goldTimeoutMs,
    executeTimeoutMs: config.executeTimeoutMs,
    referenceTime: config.referenceTime,
    verification: verificationRelevantConfig(config.verification),
    dbIds: config.dbIds ?? null,
    // Only when set: a run without it keeps the config hash it always had.
    ...(config.license ? { license: config.license } : {}),
    ...(config.formulations.includes('rest') ? { rest: restRelevantConfig(config) } : {}),
    ...(config.formulations.includes('chain') ? { chain: config.chain } : {}),
  };
}

/** What changes REST output: the rest knobs and, when an LLM is used, which one and how (never its key). */
function restRelevantConfig(config: Config): Record<string, unknown> {
  const llm = config.llm && {
    provider: config.llm.provider,
    model: config.llm.model,
    temperature: config.llm.temperature,
    maxTokens: config.llm.maxTokens ?? null,
  };
  // How the dataset is served changes nothing in it.
  const { serveLanes: _lanes, serveTimeoutMs: _timeout, serveMaxInFlight: _inFlight, ...rest } = config.rest;
  return { ...rest, llm: llm ?? null };
}

/** What changes the samples: not where variant tables are kept, nor how long building one may take. */
export function verificationRelevantConfig({
  variants,
  seed,
  nondeterministicGold,
  weakGold,
  variantRows,
}: VerificationConfig) {
  return { variants, seed, nondeterministicGold, weakGold, variantRows };
}
