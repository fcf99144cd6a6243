import { Command, InvalidArgumentError, Option } from 'commander';
import { growHeapAsV8Does } from './heap.js';
import { loadConfig } from '../config/load.js';
import { EXPORT_DEFAULTS, LIVE_API_BENCH_LAYOUTS, LIVE_API_BENCH_PANDAS } from '../config/schema.js';
import { FORMULATIONS, type Formulation } from '../core/model.js';
import { UserFacingError } from '../core/errors.js';
import { positiveInt } from './args.js';
import { CONFIG_DEFAULTS, withDefault } from './defaults.js';
import { textTable } from './table.js';
import type { ExportResult } from '../export/run.js';
import type { TokenStats } from '../export/tokens.js';
import type { ExportSettings, FormatName, SplitMode } from '../export/settings.js';

/**
 * `nl2api export`: generated outputs to training and benchmark formats, split without
 * leakage, with negatives; several `--from` make a mixture. The export code loads only when
 * the command runs.
 */

interface ExportFlags {
  from: string[];
  source?: string[];
  weight?: number[];
  out: string;
  format?: FormatName[];
  formulations?: Formulation[];
  split?: SplitMode;
  shares?: ExportSettings['shares'];
  seed?: number;
  negatives?: number;
  restTools?: number;
  rows?: number;
  encoding?: ExportSettings['encoding'];
  maxTokens?: number;
  dropOver?: boolean;
  liveApiBenchLayout?: ExportSettings['liveApiBenchLayout'];
  liveApiBenchPandas?: ExportSettings['liveApiBenchPandas'];
  concurrency?: number;
  sqlWorkers?: number;
  config?: string;
}

export function addExportCommand(program: Command): void {
  program
    .command('export')
    .description('export generated outputs as training and benchmark formats (splits, negatives, mixtures)')
    .requiredOption('--from <dir...>', 'output folder(s) of nl2api generate (several: a mixture, duplicates dropped)')
    .option(
      '--source <dir...>',
      'the source each --from was generated from (its databases run the gold calls); one for all, or one per --from',
    )
    .option('--weight <w...>', 'per --from, how many times its samples appear (0.5: a seeded half; 2: twice)', weights)
    .requiredOption('--out <dir>', 'the export folder')
    .addOption(
      new Option('--format <f...>', `formats (default: all: ${EXPORT_DEFAULTS.formats.join(', ')})`).choices([
        ...EXPORT_DEFAULTS.formats,
      ]),
    )
    .option(
      '--formulations <list>',
      'comma-separated: slot,sel,rest,chain (default: every one the output has)',
      formulations,
    )
    .addOption(
      new Option('--split <mode>', `how to split (default ${EXPORT_DEFAULTS.split})`).choices([
        'by-database',
        'by-question',
        'none',
      ]),
    )
    .option('--shares <t,v,t>', 'train,validation,test shares (default 0.8,0.1,0.1)', shares)
    .option(
      '--seed <n>',
      `seed of the splits, weights, negatives and tool draws (default ${EXPORT_DEFAULTS.seed})`,
      integer,
    )
    .option(
      '--negatives <share>',
      `share of questions that also get a negative (default ${EXPORT_DEFAULTS.negatives})`,
      share,
    )
    .option(
      '--rest-tools <n>',
      `REST endpoints offered per example, the gold's included; 0: all of its database (default ${EXPORT_DEFAULTS.restTools})`,
      integer,
    )
    .option(
      '--rows <n>',
      `rows of a tool's output a conversation shows, 1-20 (default ${EXPORT_DEFAULTS.rows}; evaluation shows 20)`,
      rowCount,
    )
    .addOption(
      new Option('--encoding <name>', 'tokenizer of the token statistics').choices(['o200k_base', 'cl100k_base']),
    )
    .option(
      '--max-tokens <n>',
      'token budget of one example: those over it (in any training format) are reported per format and formulation',
      positiveInt,
    )
    .option(
      '--drop-over',
      'with --max-tokens: leave the examples over the budget out of every format (listed in export.json)',
    )
    .addOption(
      new Option(
        '--live-api-bench-layout <layout>',
        `Live API-Bench SLOT/SEL files: records (arrays per database), builder (IBM/live-api-bench's builder output), m3 (IBM/m3-train-eval's reader) (default ${EXPORT_DEFAULTS.liveApiBenchLayout})`,
      ).choices([...LIVE_API_BENCH_LAYOUTS]),
    )
    .addOption(
      new Option(
        '--live-api-bench-pandas <version>',
        `the pandas Live API-Bench's runtime runs on, which orders a join's rows: 2.2 (2.2 and later: the left table's order) or 1.5 (before 2.2, e.g. Debian 12's: grouped by join key) (default ${EXPORT_DEFAULTS.liveApiBenchPandas})`,
      ).choices([...LIVE_API_BENCH_PANDAS]),
    )
    .option('--concurrency <n>', withDefault('samples in flight', CONFIG_DEFAULTS.concurrency), positiveInt)
    .option('--sql-workers <n>', withDefault('SQL worker processes', CONFIG_DEFAULTS.sqlWorkers), positiveInt)
    .option('--config <file>', 'JSON config file (its `export` block; flags override it)')
    .action(async (flags: ExportFlags, command: Command) => {
      process.exitCode = await runExportCommand(flags, command);
    });
}

async function runExportCommand(flags: ExportFlags, command: Command): Promise<number> {
  growHeapAsV8Does();
  const given = (key: keyof ExportFlags) => command.getOptionValueSource(key) === 'cli';
  const config = await loadConfig({
    file: flags.config,
    flags: {
      ...(given('concurrency') ? { concurrency: flags.concurrency } : {}),
      ...(given('sqlWorkers') ? { sqlWorkers: flags.sqlWorkers } : {}),
    },
  });
  const sources = flags.source ?? (config.source ? [config.source] : []);
  if (sources.length === 0)
    throw new UserFacingError('no --source: the databases the outputs were generated from (they run the gold calls)');
  if (sources.length !== 1 && sources.length !== flags.from.length)
    throw new UserFacingError(
      `${sources.length} --source for ${flags.from.length} --from: give one, or one per --from`,
    );
  if (flags.weight && flags.weight.length !== flags.from.length)
    throw new UserFacingError(`${flags.weight.length} --weight for ${flags.from.length} --from: give one per --from`);
  const { runExport } = await import('../export/run.js');
  const { exportSettings } = await import('../export/settings.js');
  const settings = exportSettings(config.export, {
    formats: flags.format,
    formulations: flags.formulations,
    split: flags.split,
    shares: flags.shares,
    seed: flags.seed,
    negatives: flags.negatives,
    restTools: flags.restTools,
    rows: flags.rows,
    encoding: flags.encoding,
    maxTokens: flags.maxTokens,
    dropOver: flags.dropOver,
    liveApiBenchLayout: flags.liveApiBenchLayout,
    liveApiBenchPandas: flags.liveApiBenchPandas,
  });
  if (settings.dropOver && settings.maxTokens === undefined)
    throw new UserFacingError('--drop-over needs a budget: --max-tokens <n> (or export.maxTokens in the config)');
  let last = 0;
  const result = await runExport({
    ...settings,
    from: flags.from.map((dir, i) => ({
      dir,
      databases: sources[sources.length === 1 ? 0 : i],
      weight: flags.weight?.[i] ?? 1,
    })),
    out: flags.out,
    config,
    onProgress: (done, total) => {
      const now = Date.now();
      if (done === total || now - last > 1000) {
        last = now;
        process.stderr.write(`export: ${done}/${total} samples run\n`);
      }
    },
  });
  process.stdout.write(`${exportReport(result)}\n`);
  return result.summary.counts.invalid > 0 ? 1 : 0;
}

/** What the command prints: counts per formulation and split, tokens per format, leakage, files. */
export function exportReport({ summary, unchanged, written }: ExportResult): string {
  const { counts, leakage } = summary;
  const splits = ['train', 'validation', 'test'] as const;
  const rows = Object.entries(counts.examples).map(([f, perSplit]) => [
    f,
    ...splits.map((s) => String(perSplit?.[s] ?? 0)),
  ]);
  const statsRow = (format: string, f: string, split: string, stats: TokenStats) => [
    format,
    f,
    split,
    String(stats.examples),
    String(stats.total),
    stats.mean.toFixed(0),
    String(stats.p50),
    String(stats.p95),
    String(stats.max),
    `${(stats.toolShare * 100).toFixed(0)}%`,
  ];
  const tokens = Object.entries(summary.tokens).flatMap(([format, perFormulation]) =>
    Object.entries(perFormulation).flatMap(([f, stats]) => [
      statsRow(format, f, 'all', stats),
      ...splits.flatMap((s) => (stats.splits[s] ? [statsRow(format, f, s, stats.splits[s])] : [])),
    ]),
  );
  const budget = summary.budget;
  const over = budget
    ? Object.entries(budget.over).flatMap(([format, perFormulation]) =>
        Object.entries(perFormulation).map(([f, n]) => `${format} ${f}: ${n}`),
      )
    : [];
  return [
    textTable([['formulation', ...splits], ...rows]),
    '',
    `${counts.loaded} samples read = ${counts.exported} exported + ${counts.duplicates} duplicates + ${counts.failed} failed; ${counts.negatives} negatives (${counts.negativesDropped} drawn but dropped: export.json says why); ${counts.invalid} invalid lines; ${counts.unsupported} left out of a format that has no form for them`,
    '',
    textTable([
      ['format', 'formulation', 'split', 'examples', 'tokens', 'mean', 'p50', 'p95', 'max', 'tools'],
      ...tokens,
    ]),
    ...(budget
      ? [
          `over ${budget.maxTokens} tokens: ${over.length ? over.join(', ') : 'none'}${budget.dropped.length ? `; ${budget.dropped.length} examples dropped (--drop-over)` : ''}`,
        ]
      : []),
    '',
    `leakage: ${leakage.sharedDatabases.length} shared databases; question pairs across splits: ${leakage.identicalQuestions.pairs} identical, ${leakage.nearDuplicateQuestions.pairs} near-identical; ${leakage.identicalSql.pairs} identical SQL; ${leakage.identicalCalls.pairs} identical call sequences`,
    ...summary.failures.slice(0, 10).map((f) => `failed ${f.key}: ${f.category}: ${f.message}`),
    ...summary.invalid.slice(0, 10).map((f) => `invalid ${f.format} ${f.key}: ${f.message}`),
    ...summary.unsupported.slice(0, 10).map((f) => `not in ${f.format}: ${f.key}: ${f.message}`),
    unchanged
      ? 'unchanged since the last export: nothing written'
      : `${written} of ${Object.keys(summary.files).length} files written (the rest unchanged)`,
  ].join('\n');
}

function formulations(value: string): Formulation[] {
  const list = value.split(',').map((f) => f.trim());
  const unknown = list.filter((f) => !(FORMULATIONS as readonly string[]).includes(f));
  if (unknown.length)
    throw new InvalidArgumentError(`unknown formulation ${unknown.join(', ')} (${FORMULATIONS.join(', ')})`);
  return list as Formulation[];
}

function shares(value: string): ExportSettings['shares'] {
  const parts = value.split(',').map(Number);
  if (parts.length !== 3 || parts.some((p) => !(p >= 0)) || parts[0] + parts[1] + parts[2] <= 0)
    throw new InvalidArgumentError('three shares, train,validation,test, not all 0 (e.g. 0.8,0.1,0.1)');
  return { train: parts[0], validation: parts[1], test: parts[2] };
}

function share(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('a share between 0 and 1');
  return n;
}

function rowCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new InvalidArgumentError('a whole number from 1 to 20');
  return n;
}

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number, 0 or more');
  return n;
}

function weights(value: string, previous: number[] | undefined): number[] {
  const n = Number(value);
  if (!(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('a weight, 0 or more');
  return [...(previous ?? []), n];
}
