import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { growHeapAsV8Does } from './heap.js';
import { loadConfig } from '../config/load.js';
import { UserFacingError } from '../core/errors.js';
import { FORMULATIONS, type Formulation } from '../core/model.js';
import { positiveInt } from './args.js';
import { CONFIG_DEFAULTS, withDefault } from './defaults.js';
import { EXIT_INTERRUPTED } from './exit-codes.js';
import { textTable } from './table.js';
import { EVAL_DEFAULTS } from '../config/schema.js';
import type { ModelSummary, PredictionsReport } from '../eval/summary.js';
import { PREDICTION_FORMATS, type PredictionFormat } from '../eval/predictions/formats.js';

/**
 * `nl2api eval` (models or agents on a generated dataset, report in a folder) and
 * `nl2api report` (several runs on one page). The evaluation loads only when one runs.
 */

interface EvalFlags {
  dataset: string;
  source?: string;
  formulation: Formulation;
  db?: string[];
  limit?: number;
  model: string[];
  mode: 'direct' | 'react';
  tools: 'native' | 'prompt';
  shots: number;
  repeats: number;
  budget: number;
  obfuscate?: boolean;
  sqlBaseline?: boolean;
  shortlist: number;
  report: string;
  cacheDir?: string;
  cache?: boolean;
  concurrency?: number;
  sqlWorkers?: number;
  config?: string;
  queue?: string;
  localWorkers?: boolean;
  run?: string;
  queuePrefix?: string;
  name?: string;
  predictions?: string;
  predictionsFormat: PredictionFormat;
}

export const DEFAULT_EVAL_MODEL = 'mistral:mistral-large-latest';

export function addEvalCommands(program: Command): void {
  program
    .command('eval')
    .description('evaluate models or ReAct agents on a generated dataset: results.jsonl, summary.json, index.html')
    .requiredOption('--dataset <dir>', 'the output folder of a generate run')
    .option('--source <dir>', 'the dataset source it was generated from (its databases run the tools)')
    .addOption(new Option('--formulation <f>', 'which samples').choices([...FORMULATIONS]).default('slot'))
    .option('--db <id...>', 'only these databases (repeatable)')
    .option('--limit <n>', 'at most this many items per database', positiveInt)
    .option(
      '--model <id...>',
      `oracle, baseline:knn, or <provider>:<model>[@<base url>] (repeatable: side by side; API keys from the environment)`,
      [DEFAULT_EVAL_MODEL],
    )
    .addOption(
      new Option('--mode <mode>', 'one reply, or a Think-Act-Observe agent')
        .choices(['direct', 'react'])
        .default(EVAL_DEFAULTS.mode),
    )
    .addOption(
      new Option('--tools <how>', 'tools listed in the prompt, or bound as native tools')
        .choices(['prompt', 'native'])
        .default(EVAL_DEFAULTS.tools),
    )
    .option(
      '--shots <n>',
      'in-context examples (SLOT/SEL, tools in the prompt), from the same database',
      nonNegative,
      EVAL_DEFAULTS.shots,
    )
    .option('--repeats <n>', 'attempts per item (election stability)', positiveInt, EVAL_DEFAULTS.repeats)
    .option('--budget <n>', 'ReAct turns', positiveInt, EVAL_DEFAULTS.budget)
    .option(
      '--sql-baseline',
      'also ask each model for SQL against the database: its completion rate beside the API one',
    )
    .option('--obfuscate', 'tool and argument names replaced by FUNC_N / ARG_N (descriptions kept)')
    .option(
      '--shortlist <percent>',
      'tool universe cut to this share, gold tools kept (10, 25, 50, 75; 100: all)',
      percent,
      EVAL_DEFAULTS.shortlist,
    )
    .option('--report <dir>', 'where results and the page go', 'eval-report')
    .option('--name <name>', "the run's name on the report (default: model, mode and tools)")
    .option(
      '--predictions <path>',
      "score another agent's calls instead of asking a model: a file or folder of predictions, replayed through the live tools",
    )
    .addOption(
      new Option('--predictions-format <format>', 'nl2api: {id, calls} lines; vakra: VAKRA runner output')
        .choices([...PREDICTION_FORMATS])
        .default('nl2api'),
    )
    .option('--cache-dir <dir>', 'results and reply cache (default <report>/.cache)')
    .option('--no-cache', 'ask again (results are still written to the cache)')
    .option(
      '--concurrency <n>',
      withDefault(
        'attempts in flight (a model server on this machine: its requests in flight, attempts at twice it)',
        CONFIG_DEFAULTS.concurrency,
      ),
      positiveInt,
    )
    .option('--sql-workers <n>', withDefault('SQL worker processes', CONFIG_DEFAULTS.sqlWorkers), positiveInt)
    .option('--config <file>', 'JSON config file (LLM limits, timeouts; flags override it)')
    .option('--queue <url>', 'Redis URL: spread the attempts over queue workers (`nl2api worker`)')
    .option('--no-local-workers', 'with --queue: only enqueue and wait (the attempts are run by `nl2api worker`s)')
    .option('--run <id>', 'with --queue: attach to this evaluation run (a restarted driver resumes it)')
    .option('--queue-prefix <prefix>', 'with --queue: key prefix in Redis (workers must use the same)')
    .action(async (flags: EvalFlags, command: Command) => {
      process.exitCode = await runEvalCommand(flags, command);
    });

  program
    .command('report')
    .description('put the results of several eval runs on one page')
    .argument('<dirs...>', 'report folders of eval runs')
    .option('--out <dir>', 'where the merged page goes', 'eval-report-merged')
    .action(async (dirs: string[], flags: { out: string }) => {
      const { mergeReports } = await import('../eval/report/write.js');
      const file = await mergeReports(dirs, path.resolve(flags.out));
      process.stdout.write(`${file}\n`);
    });
}

async function runEvalCommand(flags: EvalFlags, command: Command): Promise<number> {
  growHeapAsV8Does();
  const given = (key: keyof EvalFlags) => command.getOptionValueSource(key) === 'cli';
  if (flags.predictions && given('model'))
    throw new UserFacingError('--predictions scores the calls in its files: give no --model');
  const config = await loadConfig({
    file: flags.config,
    flags: {
      source: flags.source,
      dbIds: flags.db,
      ...(given('concurrency') ? { concurrency: flags.concurrency } : {}),
      ...(given('sqlWorkers') ? { sqlWorkers: flags.sqlWorkers } : {}),
      ...(given('cache') ? { cache: flags.cache } : {}),
      ...(flags.queue
        ? {
            queue: {
              url: flags.queue,
              ...(given('localWorkers') ? { localWorkers: flags.localWorkers } : {}),
              ...(flags.run ? { runId: flags.run } : {}),
              ...(flags.queuePrefix ? { prefix: flags.queuePrefix } : {}),
            },
          }
        : {}),
    },
  });
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(EXIT_INTERRUPTED);
    process.stderr.write('\nstopping: finishing the attempts in flight (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const { runEval } = await import('../eval/run.js');
    let last = 0;
    const run = await runEval({
      config,
      dataset: flags.dataset,
      formulation: flags.formulation,
      models: flags.model,
      mode: flags.mode,
      tools: flags.tools,
      shots: flags.shots,
      repeats: flags.repeats,
      budget: flags.budget,
      limit: flags.limit,
      obfuscate: flags.obfuscate ?? false,
      sqlBaseline: flags.sqlBaseline ?? false,
      shortlist: flags.shortlist,
      report: flags.report,
      name: flags.name,
      ...(flags.predictions ? { predictions: { path: flags.predictions, format: flags.predictionsFormat } } : {}),
      cacheDir: flags.cacheDir,
      signal: controller.signal,
      log: (line) => process.stderr.write(`${line}\n`),
      onProgress: (done, total) => {
        const now = Date.now();
        if (done === total || now - last > 1000) {
          last = now;
          process.stderr.write(`eval: ${done}/${total} attempts\n`);
        }
      },
    });
    if (run.aborted) {
      process.stderr.write('interrupted: finished attempts are in the cache; rerun to complete\n');
      return EXIT_INTERRUPTED;
    }
    if (run.summary.predictions) process.stdout.write(`${predictionsNote(run.summary.predictions)}\n`);
    process.stdout.write(`${headlineTable(run.summary.models)}\n\n`);
    const requests = run.usage.total.requests;
    process.stdout.write(
      `${run.files.join('\n')}\n(${requests} model requests, ${run.usage.total.cacheHits} cached replies)\n`,
    );
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export function headlineTable(models: readonly ModelSummary[]): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return textTable(
    [
      [
        'model',
        'items',
        'failed',
        'completion',
        '95% CI',
        'intent F1',
        'slot F1',
        'full seq',
        'SQL baseline',
        'top error',
      ],
      ...models.map((m) => {
        const [top] = Object.entries(m.errors)
          .filter(([c]) => c !== 'none')
          .sort((a, b) => b[1] - a[1]);
        return [
          m.model,
          String(m.attempts),
          String(m.failed),
          pct(m.completion.mean),
          `${pct(m.completion.low)}-${pct(m.completion.high)}`,
          m.intentF1.mean.toFixed(3),
          m.slotF1.mean.toFixed(3),
          pct(m.fullSequenceMatch),
          m.sqlBaseline ? pct(m.sqlBaseline.completion.mean) : '-',
          top && top[1] > 0 ? `${top[0]} (${top[1]})` : '-',
        ];
      }),
    ],
    { rule: true, rightAligned: (c) => c > 0 && c < 9 },
  );
}

/** What the predictions held: every missing item and unknown id is said (the first ten listed). */
export function predictionsNote(report: PredictionsReport): string {
  const some = (ids: readonly string[]) => ids.slice(0, 10).join(', ') + (ids.length > 10 ? ', …' : '');
  return [
    `predictions (${report.format}) from ${report.path}: ${report.read} items read`,
    report.missing.length ? `  ${report.missing.length} items have none (not completed): ${some(report.missing)}` : '',
    report.unknown.length ? `  ${report.unknown.length} ids are no item evaluated: ${some(report.unknown)}` : '',
    report.duplicates.length
      ? `  ${report.duplicates.length} ids given twice (the first kept): ${some(report.duplicates)}`
      : '',
    ...report.invalid.slice(0, 10).map((reason) => `  unreadable: ${reason}`),
    report.invalid.length > 10 ? `  … ${report.invalid.length - 10} more unreadable records (summary.json)` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

function percent(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('expected a percentage (1-100)');
  return n;
}
