import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { EXPORT_DEFAULTS, type Config } from '../config/schema.js';
import { groupBy } from '../core/group.js';
import { hashJson, sha256 } from '../core/hash.js';
import { orderedFormulations, type Formulation } from '../core/model.js';
import { accept, reject, type Outcome } from '../core/outcome.js';
import { packageVersion } from '../core/package-root.js';
import { DatasetError } from '../eval/dataset.js';
import { openLiveTools, type LiveTools } from '../eval/live-tools.js';
import { codeFingerprint, CODE_DIRS } from '../pipeline/code-fingerprint.js';
import { jsonlText, jsonText, writeFileAtomic } from '../pipeline/files.js';
import { memoizeExecutor } from '../pipeline/sql-memo.js';
import { createSqlPool } from '../runtime/sql/pool.js';
import { ensureWritableDir } from '../pipeline/setup-error.js';
import type { CorpusInput, CorpusItem } from './corpus.js';
import { GoldCallError, runGold, type GoldRun, type SharedOutputs } from './gold-run.js';
import { hfCard, shardFiles, SHARD_ROWS } from './hf-layout.js';
import { leakageReport, type LeakageReport } from './leakage.js';
import type { Duplicate } from './mixture.js';
import { nativeExample } from './native.js';
import type { TriedCalls } from './negatives.js';
import { recordsToParquet } from './parquet.js';
import { exportSamples, planExport, splitKeyOf, type ExportPlan } from './plan.js';
import { provenanceOf, type ExportSample } from './sample.js';
import type { ExportSettings } from './settings.js';
import { SPLIT_NAMES, type SplitName } from './splits.js';
import { groupsOf, tokensPerSample, writeFormats, type FormulationTokens, type OverBudget } from './write-formats.js';
import { ExportWriter, exists } from './writer.js';

/**
 * `nl2api export`: generated outputs (`--from`, one or several) → training and benchmark
 * formats, without regenerating anything. Samples are read as evaluation reads them, mixed
 * (cross-source duplicates dropped, weights applied), split without leakage, given negatives,
 * and their gold calls run once through the live tools for the real outputs a conversation
 * shows (one memoized pool of SQL workers for the whole export). Every line is checked
 * against its format's schema before it is written; the parts lines share (tool specs) are
 * built, checked and serialized once (shared-parts.ts), and tokens are counted beside the
 * writing (tokens.ts). The export is incremental: its inputs' hash is kept in `export.json`,
 * and an unchanged input re-exports nothing; a changed one rewrites only the files whose
 * content changed.
 */

export interface ExportOptions extends ExportSettings {
  from: CorpusInput[];
  out: string;
  /** SQL workers, timeouts, concurrency, retries, the cache switch. */
  config: Config;
  onProgress?: (done: number, total: number) => void;
}

export interface ExportSummary {
  nl2api: string;
  /** Hash of everything the export is a function of: a rerun with the same hash writes nothing. */
  inputs: string;
  settings: ExportSettings;
  sources: { name: string; dataset: string; weight: number; samples: number }[];
  counts: {
    /** Samples read, over every source and formulation. */
    loaded: number;
    /** Dropped as another source's question (`duplicates`). */
    duplicates: number;
    /** Whose gold calls no longer run (`failures`). */
    failed: number;
    /** loaded − duplicates − failed. */
    exported: number;
    /** Examples per formulation and split, weighted copies and negatives included. */
    examples: Partial<Record<Formulation, Partial<Record<SplitName, number>>>>;
    negatives: number;
    /** Questions drawn for a negative that cannot have one (`negativesDropped`). */
    negativesDropped: number;
    /** Lines refused by their format's schema (`invalid`): 0 unless there is a bug. */
    invalid: number;
    /** Samples a format has no form for (`unsupported`), left out of that format only. */
    unsupported: number;
    /** Examples over `--max-tokens` left out of every format (`--drop-over`; `budget.dropped`), not in `examples`. */
    dropped: number;
  };
  duplicates: Duplicate[];
  failures: { key: string; category: string; message: string }[];
  /** Why a question drawn for a negative has none: its answer is empty, or what is left of its tools could give it. */
  negativesDropped: { key: string; category: string; message: string }[];
  invalid: { format: string; key: string; message: string }[];
  unsupported: { format: string; key: string; message: string }[];
  /** Per training format and formulation, over its splits and per split. */
  tokens: Record<string, Partial<Record<Formulation, FormulationTokens>>>;
  /** With `--max-tokens`: the examples over it per format and formulation (before any was dropped), and those dropped. */
  budget?: {
    maxTokens: number;
    over: OverBudget;
    dropped: { key: string; formulation: Formulation; split: SplitName; tokens: Record<string, number> }[];
  };
  leakage: LeakageReport;
  /** Every file written, with its content hash. */
  files: Record<string, string>;
}

export interface ExportResult {
  summary: ExportSummary;
  /** Nothing changed since the last export to this folder: nothing was written. */
  unchanged: boolean;
  written: number;
}

const SUMMARY_FILE = 'export.json';

export async function runExport(options: ExportOptions): Promise<ExportResult> {
  const out = path.resolve(options.out);
  ensureWritableDir(out, 'the export folder');
  const settings = settingsOf(options);
  const code = codeFingerprint([...CODE_DIRS, 'eval', 'export']);
  const inputs = hashJson({
    code,
    settings,
    sources: await Promise.all(options.from.map(async (f) => ({ weight: f.weight, files: await folderHash(f.dir) }))),
  });
  const previous = await readSummary(out);
  if (previous?.inputs === inputs && (await allExist(out, Object.keys(previous.files))))
    return { summary: previous, unchanged: true, written: 0 };

  const plan = await planExport(options.from, settings);
  const { corpus, kept, duplicates, assignment } = plan;
  const runs = await runAllGold(plan, options);

  const failures = kept.flatMap((e) => {
    const run = runs.get(e.key);
    return run && !run.ok ? [{ key: e.key, category: run.category, message: run.message }] : [];
  });
  const negativesDropped = kept.flatMap((e) => {
    const run = runs.get(e.key);
    const negative = run?.ok ? run.value.negative : undefined;
    return negative && !negative.ok ? [{ key: e.key, category: negative.category, message: negative.message }] : [];
  });
  const { samples, dropped } = withinBudget(exportSamples(plan, runs, settings), settings);
  const writer = new ExportWriter(out, previous?.files ?? {});
  for (const group of groupsOf(samples))
    await writer.write(
      `provenance/${group.formulation}/${group.split}.jsonl`,
      jsonlText(group.samples.map(provenanceOf)),
    );
  const { tokens, invalid, unsupported, over } = await writeFormats(writer, samples, settings);
  const leakage = leakageReport(leakageItems(kept), assignment, settings.nearDuplicate);

  const examples: ExportSummary['counts']['examples'] = {};
  for (const sample of samples) {
    const perSplit = (examples[sample.item.formulation] ??= {});
    perSplit[sample.split] = (perSplit[sample.split] ?? 0) + 1;
  }
  const summary: ExportSummary = {
    nl2api: packageVersion(),
    inputs,
    settings,
    sources: corpus.sources.map((s) => ({
      name: s.name,
      dataset: s.dataset,
      weight: s.weight,
      samples: corpus.items.filter((e) => e.source === s).length,
    })),
    counts: {
      loaded: corpus.items.length,
      duplicates: corpus.items.length - kept.length,
      failed: failures.length,
      exported: kept.length - failures.length,
      examples,
      negatives: samples.filter((s) => s.negative).length,
      negativesDropped: negativesDropped.length,
      invalid: invalid.length,
      unsupported: unsupported.length,
      dropped: dropped.length,
    },
    duplicates,
    failures,
    negativesDropped,
    invalid,
    unsupported,
    tokens,
    ...(settings.maxTokens !== undefined
      ? {
          budget: {
            maxTokens: settings.maxTokens,
            over: settings.dropOver ? overOf(dropped, settings.maxTokens) : over,
            dropped,
          },
        }
      : {}),
    leakage,
    files: {},
  };
  if (settings.formats.includes('hf')) await writeHfLayout(writer, samples, corpus.sources[0]?.dir, summary);
  await writer.write('leakage.json', jsonText(leakage));
  summary.files = await writer.finish();
  // Last: its presence with this input hash is what makes the next run a no-op.
  await writeFileAtomic(path.join(out, SUMMARY_FILE), jsonText(summary));
  return { summary, unchanged: false, written: writer.written };
}

/** The settings part of the options (what the export's output depends on besides its inputs). */
function settingsOf(options: ExportOptions): ExportSettings {
  const { from, out, config, onProgress, formulations, ...settings } = options;
  return { ...settings, ...(formulations ? { formulations: orderedFormulations(formulations) } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Splits, gold runs, examples

/**
 * Each kept sample's gold run (or why it failed), over one memoized pool of SQL workers; the
 * outputs one run gives serve every other sample whose calls up to there are the same (SEL
 * shows its SLOT twin's: gold-run.ts SharedOutputs). A dataset's live tools (its databases
 * checked against the manifest's fingerprints, REST's server) open only when one of its
 * samples needs them.
 */
async function runAllGold(
  { corpus: { datasets }, kept, negativeUnits }: ExportPlan,
  options: ExportOptions,
): Promise<Map<string, Outcome<GoldRun>>> {
  const { config } = options;
  const runs = new Map<string, Outcome<GoldRun>>();
  const limit = pLimit(config.concurrency);
  const pool = createSqlPool({ size: config.sqlWorkers, lookahead: 1 });
  const executor = memoizeExecutor(pool);
  const shared: SharedOutputs = new Map();
  let done = 0;
  // Only the Live API-Bench records are written for its runtime's pandas.
  const pandas = options.formats.includes('live-api-bench')
    ? (options.liveApiBenchPandas ?? EXPORT_DEFAULTS.liveApiBenchPandas)
    : undefined;
  try {
    for (const { source, dataset } of datasets) {
      const entries = kept.filter((e) => e.source === source && e.item.formulation === dataset.formulation);
      if (entries.length === 0) continue;
      let live: Promise<LiveTools> | undefined;
      const tried: TriedCalls = new Map();
      const environment = async () =>
        (await (live ??= openLiveTools(dataset, source.databases, config, executor))).environment;
      try {
        await Promise.all(
          entries.map((e) =>
            limit(async () => {
              runs.set(
                e.key,
                await goldOutcome(() =>
                  runGold(
                    e.item,
                    environment,
                    { negative: negativeUnits.has(e.unit), pandas },
                    options.rows,
                    tried,
                    shared,
                  ),
                ),
              );
              options.onProgress?.(++done, kept.length);
            }),
          ),
        );
      } finally {
        if (live) await (await live).close();
      }
    }
  } finally {
    await executor.close();
  }
  return runs;
}

/**
 * With `--drop-over`, the examples within `--max-tokens` in every training format written, and
 * those over it (left out of every format and the provenance alike, so that their lines stay
 * aligned). Counting them first makes each example twice: only when asked.
 */
function withinBudget(
  all: ExportSample[],
  settings: ExportSettings,
): { samples: ExportSample[]; dropped: NonNullable<ExportSummary['budget']>['dropped'] } {
  const { maxTokens } = settings;
  if (maxTokens === undefined || !settings.dropOver) return { samples: all, dropped: [] };
  const tokens = tokensPerSample(all, settings);
  const over = (sample: ExportSample) => Object.values(tokens.get(sample)!).some((n) => n > maxTokens);
  return {
    samples: all.filter((sample) => !over(sample)),
    dropped: all
      .filter(over)
      .map((s) => ({ key: s.key, formulation: s.item.formulation, split: s.split, tokens: tokens.get(s)! })),
  };
}

/** Per format and formulation, how many of the dropped examples that format counts over the budget. */
function overOf(dropped: NonNullable<ExportSummary['budget']>['dropped'], maxTokens: number): OverBudget {
  const over: OverBudget = {};
  for (const { formulation, tokens } of dropped)
    for (const [format, n] of Object.entries(tokens))
      if (n > maxTokens) (over[format] ??= {})[formulation] = (over[format]?.[formulation] ?? 0) + 1;
  return over;
}

/** A gold run as an outcome: the dataset disagreeing with its databases, or a fault of ours, fails the sample only. */
async function goldOutcome(run: () => Promise<GoldRun>): Promise<Outcome<GoldRun>> {
  try {
    return accept(await run());
  } catch (error) {
    if (error instanceof DatasetError) throw error; // the whole source is unusable: said once, clearly
    if (error instanceof GoldCallError) return reject(error.category, error.message);
    return reject('internal_error', (error as Error).message);
  }
}

/** One leakage item per split key (its split is the key's). */
function leakageItems(kept: readonly CorpusItem[]) {
  return [...groupBy(kept, splitKeyOf)].map(([key, entries]) => ({
    key,
    db: entries[0].item.db,
    question: entries[0].item.question,
    sql: entries[0].item.sql,
    calls: entries.map((e) => `${e.item.formulation}:${hashJson(e.item.goldCalls)}`),
  }));
}

// ---------------------------------------------------------------------------------------------
// Writing

async function writeHfLayout(
  writer: ExportWriter,
  samples: readonly ExportSample[],
  firstSourceDir: string | undefined,
  summary: ExportSummary,
): Promise<void> {
  for (const group of groupsOf(samples)) {
    const records = group.samples.map((s) => nativeExample(s) as Record<string, unknown>);
    const files = shardFiles(group.formulation, group.split, records.length);
    for (const [i, file] of files.entries())
      await writer.write(
        `hf/${file}`,
        new Uint8Array(recordsToParquet(records.slice(i * SHARD_ROWS, (i + 1) * SHARD_ROWS))),
      );
  }
  const sourceCard = firstSourceDir
    ? await readFile(path.join(firstSourceDir, 'README.md'), 'utf8').catch(() => null)
    : null;
  await writer.write(
    'hf/README.md',
    hfCard({
      sourceCard,
      prettyName: `${summary.sources.map((s) => s.dataset).join(' + ')}: tool-calling samples exported by nl2api`,
      counts: summary.counts.examples,
      exportSection: exportCardSection(summary),
    }),
  );
}

function exportCardSection(summary: ExportSummary): string {
  const { counts, settings, leakage } = summary;
  const rows = Object.entries(counts.examples).map(
    ([f, splits]) => `| ${f} | ${SPLIT_NAMES.map((s) => splits?.[s] ?? 0).join(' | ')} |`,
  );
  return [
    '## This export',
    '',
    `Exported by nl2api ${summary.nl2api} from ${summary.sources.map((s) => `\`${s.name}\` (weight ${s.weight})`).join(', ')}.`,
    `Split \`${settings.split}\` (seed ${settings.seed}); ${counts.negatives} negatives (no tool answers them: the expected output is no call and a refusal); ${counts.duplicates} cross-source duplicates dropped.`,
    '',
    `| formulation | ${SPLIT_NAMES.join(' | ')} |`,
    `|---|${SPLIT_NAMES.map(() => '---').join('|')}|`,
    ...rows,
    '',
    `Leakage across splits: ${leakage.sharedDatabases.length} shared databases, ${leakage.identicalQuestions.pairs} identical and ${leakage.nearDuplicateQuestions.pairs} near-identical question pairs (Jaccard ≥ ${leakage.nearDuplicateQuestions.threshold}), ${leakage.identicalSql.pairs} identical SQL, ${leakage.identicalCalls.pairs} identical call sequences.`,
    '',
    'Load it with `datasets.load_dataset("<folder or repo>", "<formulation>")`; the `nl2api` records are described above.',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Incrementality

/** Content hash of a generated output folder (its samples, tools, manifest and card). */
async function folderHash(dir: string): Promise<string> {
  const root = path.resolve(dir);
  const files = (
    await readdir(root, { recursive: true }).catch(() => {
      throw new DatasetError(`cannot read ${root}: is it the output folder of nl2api generate?`);
    })
  )
    .filter((f) => !f.split(path.sep).some((part) => part.startsWith('.')))
    .sort();
  const parts: string[] = [];
  for (const file of files) {
    const full = path.join(root, file);
    if ((await stat(full)).isFile()) parts.push(`${file}\u0000${sha256(await readFile(full))}`);
  }
  return sha256(parts.join('\n'));
}

async function readSummary(out: string): Promise<ExportSummary | undefined> {
  const text = await readFile(path.join(out, SUMMARY_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as ExportSummary;
  } catch {
    return undefined; // a damaged summary: export everything again
  }
}

async function allExist(out: string, files: readonly string[]): Promise<boolean> {
  for (const file of files) if (!(await exists(path.join(out, file)))) return false;
  return true;
}
