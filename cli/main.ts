#!/usr/bin/env -S node --max-semi-space-size=4
// The heap's limits first (heap.ts): nothing below has allocated yet.
import './heap.js';
import fs from 'node:fs';
import { UserFacingError } from '../core/errors.js';
import { FORMULATIONS } from '../core/model.js';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, Option } from 'commander';
import { cacheDirOf, loadConfig } from '../config/load.js';
import type { Config, ConfigInput } from '../config/schema.js';
import { generate } from '../pipeline/generate.js';
import { packageRoot, packageVersion } from '../core/package-root.js';
import { InvariantError } from '../pipeline/stats.js';
import { createProgressReporter } from './progress.js';
import { summaryTable } from './summary.js';
import { commaList, nonNegativeInt, positiveInt } from './args.js';
import { CONFIG_DEFAULTS, withDefault } from './defaults.js';
import { EXIT_ERROR, EXIT_INTERRUPTED, runVerdict } from './exit-codes.js';
import { addQueueCommands } from './queue-commands.js';
import { addEvalCommands } from './eval-commands.js';
import { addExportCommand } from './export-command.js';
import { addMcpCommand } from './mcp-command.js';
import type { LlmProvider } from '../generators/llm/config.js';
import { PROVIDER_NAMES, PROVIDERS } from '../generators/llm/providers.js';

/** The `nl2api` command. Errors a user can fix print one clear line and exit 1. */

interface GenerateFlags {
  source?: string;
  datasetName?: string;
  formulations?: string[];
  out?: string;
  db?: string[];
  pool?: string;
  concurrency?: number;
  sqlWorkers?: number;
  config?: string;
  cache?: boolean;
  cacheDir?: string;
  fingerprintCache?: boolean;
  progress?: string;
  synthesizer?: string;
  variants?: number;
  nondeterministicGold?: string;
  weakGold?: string;
  /** One of PROVIDER_NAMES: commander checks the choice. */
  llmProvider?: LlmProvider;
  llmModel?: string;
  llmBaseUrl?: string;
  queue?: string;
  localWorkers?: boolean;
  run?: string;
  queuePrefix?: string;
  strict?: boolean;
}

interface ServeFlags {
  source?: string;
  out?: string;
  db?: string[];
  host: string;
  port: number;
  config?: string;
  sqlWorkers?: number;
}

export function buildProgram(): Command {
  const program = new Command()
    .name('nl2api')
    .description('Turns NL2SQL datasets into verified tool-calling datasets (SLOT, SEL, REST)')
    .version(packageVersion());

  const run = withRunOptions(
    program
      .command('generate')
      .description('generate SLOT/SEL/REST (and chain) datasets from a source (BIRD layout, or JSONL + SQLite dir)')
      .option('--source <dir>', 'dataset source directory (or question file)')
      .option('--dataset-name <name>', "the samples' dataset_name (default: from the source, e.g. bird-dev)")
      .option(
        '--formulations <list>',
        withDefault(`comma-separated: ${FORMULATIONS.join(',')}`, CONFIG_DEFAULTS.formulations),
        commaList,
      )
      .option('--out <dir>', withDefault('output directory', CONFIG_DEFAULTS.out))
      .option('--db <id...>', 'only these databases (repeatable)')
      .option(
        '--strict',
        'exit 3 when any input record is bad (an unusable database, a malformed record), not only when nothing is produced',
      ),
  );
  run.action(async (flags: GenerateFlags, command: Command) => {
    process.exitCode = await runGenerate(flags, command);
  });

  const demo = withRunOptions(
    program
      .command('demo')
      .description('generate on the bundled demo dataset (seeds/demo) and print a summary')
      .option('--out <dir>', 'output directory', 'output/demo'),
  );
  demo.action(async (flags: GenerateFlags, command: Command) => {
    process.exitCode = await runGenerate(
      { ...flags, source: path.join(packageRoot(), 'seeds', 'demo'), datasetName: 'nl2api-demo' },
      command,
    );
  });
  program
    .command('serve')
    .description("serve a generated dataset's REST endpoints live (OpenAPI at /openapi.json, docs at /docs)")
    .option('--source <dir>', 'the dataset source the endpoints were generated from (its databases are served)')
    .option('--out <dir>', withDefault('the output directory of that generate run', CONFIG_DEFAULTS.out))
    .option('--db <id...>', 'only these databases (repeatable)')
    .option('--host <host>', 'interface to bind (loopback unless told otherwise)', '127.0.0.1')
    .option('--port <n>', 'port (0: any free one)', nonNegativeInt, 8080)
    .option('--sql-workers <n>', withDefault('SQL worker processes', CONFIG_DEFAULTS.sqlWorkers), positiveInt)
    .option('--config <file>', 'JSON config file (timeouts, string limits; flags override it)')
    .action(async (flags: ServeFlags) => {
      process.exitCode = await runServe(flags);
    });
  addQueueCommands(program, withRunOptions, (flags, command) => configFromFlags(flags, command));
  addEvalCommands(program);
  addExportCommand(program);
  addMcpCommand(program);
  // After an invalid option or argument, its error and where to look: the whole help would bury the error.
  for (const command of [program, ...program.commands]) {
    command.showHelpAfterError(
      command === program
        ? '(run nl2api --help for the commands)'
        : `(run nl2api ${command.name()} --help for the options)`,
    );
  }
  return program;
}

async function runServe(flags: ServeFlags): Promise<number> {
  const config = await loadConfig({
    file: flags.config,
    flags: { source: flags.source, out: flags.out, dbIds: flags.db, sqlWorkers: flags.sqlWorkers },
  });
  const { serveDataset } = await import('../pipeline/serve.js');
  const handle = await serveDataset({ config, host: flags.host, port: flags.port });
  for (const { dbId, endpoints } of handle.databases) process.stdout.write(`${dbId}: ${endpoints} endpoints\n`);
  process.stdout.write(
    `serving on ${handle.server.url} (OpenAPI: ${handle.server.url}/openapi.json, docs: ${handle.server.url}/docs)\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const { workerRecycles, sparedOverruns } = handle.sqlStats();
  await handle.close();
  process.stdout.write(
    `SQL workers recycled: ${workerRecycles} (statements over the CPU budget left to finish: ${sparedOverruns})\n`,
  );
  return 0;
}

function withRunOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--pool <pool>', withDefault('tool pool', CONFIG_DEFAULTS.pool)).choices(['extended', 'paper']),
    )
    .option('--concurrency <n>', withDefault('items in flight', CONFIG_DEFAULTS.concurrency), positiveInt)
    .option('--sql-workers <n>', withDefault('SQL worker processes', CONFIG_DEFAULTS.sqlWorkers), positiveInt)
    .option('--config <file>', 'JSON config file (flags override it)')
    .option('--no-cache', 'recompute everything (results are still cached)')
    .option('--cache-dir <dir>', withDefault('run store directory', '<out>/.cache'))
    .option('--no-fingerprint-cache', 'hash every database file (do not trust an unchanged size and mtime)')
    .addOption(
      new Option(
        '--progress <mode>',
        withDefault('progress display (auto: bars on a terminal)', CONFIG_DEFAULTS.progress),
      ).choices(['auto', 'bar', 'log', 'none']),
    )
    .addOption(
      new Option(
        '--synthesizer <who>',
        withDefault(
          'REST endpoint synthesizer (auto: the LLM when one is configured)',
          CONFIG_DEFAULTS.rest.synthesizer,
        ),
      ).choices(['auto', 'template', 'llm']),
    )
    .option(
      '--variants <n>',
      withDefault(
        'database variants every sample must also agree with the gold on (0: differential verification off)',
        CONFIG_DEFAULTS.verification.variants,
      ),
      nonNegativeInt,
    )
    .addOption(
      new Option(
        '--nondeterministic-gold <what>',
        withDefault('gold whose answer depends on the row order', CONFIG_DEFAULTS.verification.nondeterministicGold),
      ).choices(['reject', 'accept']),
    )
    .addOption(
      new Option(
        '--weak-gold <what>',
        withDefault(
          'samples whose gold does not discriminate (empty, trivial, insensitive)',
          CONFIG_DEFAULTS.verification.weakGold,
        ),
      ).choices(['keep', 'drop']),
    )
    .addOption(new Option('--llm-provider <provider>', llmProviderHelp()).choices(PROVIDER_NAMES))
    .option('--llm-model <name>', 'LLM model name')
    .option('--llm-base-url <url>', 'LLM server base URL (e.g. a local vLLM or llama.cpp server)')
    .option('--queue <url>', 'run on the BullMQ queue backend at this Redis URL (e.g. redis://127.0.0.1:6379)')
    .option('--no-local-workers', 'with --queue: only enqueue and wait (work is done by `nl2api worker`s)')
    .option('--run <id>', 'with --queue: attach to this run (a restarted driver resumes it)')
    .option(
      '--queue-prefix <prefix>',
      'with --queue: key prefix in Redis (default nl2api; workers must use the same --queue-prefix)',
    );
}

/** Which environment variable each provider's API key is read from, as its PROVIDERS entry says. */
function llmProviderHelp(): string {
  const keys = Object.entries(PROVIDERS).map(
    ([name, { apiKey }]) =>
      `${name}: ${apiKey ? `${apiKey.env}${apiKey.optionalWithBaseUrl ? ' (none needed with --llm-base-url)' : ''}` : 'none'}`,
  );
  return `LLM provider (API key from the environment: ${keys.join('; ')})`;
}

async function runGenerate(flags: GenerateFlags, command: Command): Promise<number> {
  const config = await configFromFlags(flags, command);
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(EXIT_INTERRUPTED); // second Ctrl-C: now
    process.stderr.write('\nstopping: finishing the items in flight (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progress = await createProgressReporter(config.progress);
  try {
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const result = await generate({ config, signal: controller.signal, onProgress: progress.listener, log });
    progress.stop();
    for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
    if (result.aborted || !result.stats) {
      process.stderr.write('interrupted: finished work is in the cache; rerun to complete\n');
      return EXIT_INTERRUPTED;
    }
    process.stdout.write(`${summaryTable(result.stats)}\n`);
    process.stdout.write(
      `\n${result.files.length + 2} files in ${result.outDir} (wall ${(result.stats.timing.wallMs / 1000).toFixed(1)} s)\n`,
    );
    if (config.evaluate) await evaluateAfterGenerate(config, result.outDir, log);
    const verdict = runVerdict(result.stats, flags.strict ?? false);
    if (verdict.reason) process.stderr.write(`nl2api: ${verdict.reason}\n`);
    return verdict.code;
  } finally {
    progress.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The config's `evaluate`: the models it names on the output just written, scores in `<out>/eval/`. */
async function evaluateAfterGenerate(config: Config, outDir: string, log: (line: string) => void): Promise<void> {
  const { evaluateOutput } = await import('../eval/nightly.js');
  await evaluateOutput({ config, out: outDir, previous: null, cacheDir: cacheDirOf(config), log });
  process.stdout.write(`evaluation in ${path.join(outDir, 'eval')}\n`);
}

/** The run's config: the file's, with the flags given on the command line over it (commander fills defaults). */
export async function configFromFlags(flags: GenerateFlags, command: Command): Promise<Config> {
  const given = (key: keyof GenerateFlags) => command.getOptionValueSource(key) === 'cli';
  const cliFlags: ConfigInput = {
    source: flags.source,
    datasetName: flags.datasetName,
    formulations: given('formulations') ? (flags.formulations as ConfigInput['formulations']) : undefined,
    out: flags.out,
    dbIds: given('db') ? flags.db : undefined,
    pool: given('pool') ? (flags.pool as ConfigInput['pool']) : undefined,
    concurrency: given('concurrency') ? flags.concurrency : undefined,
    sqlWorkers: given('sqlWorkers') ? flags.sqlWorkers : undefined,
    cache: given('cache') ? flags.cache : undefined,
    cacheDir: given('cacheDir') ? flags.cacheDir : undefined,
    fingerprintCache: given('fingerprintCache') ? flags.fingerprintCache : undefined,
    progress: given('progress') ? (flags.progress as ConfigInput['progress']) : undefined,
    rest: given('synthesizer') ? { synthesizer: flags.synthesizer as 'auto' } : undefined,
    verification: verificationFlags(flags, given),
    llm: llmFlags(flags),
    queue: flags.queue
      ? {
          url: flags.queue,
          ...(given('localWorkers') ? { localWorkers: flags.localWorkers } : {}),
          ...(flags.run ? { runId: flags.run } : {}),
          ...(flags.queuePrefix ? { prefix: flags.queuePrefix } : {}),
        }
      : undefined,
  };
  return loadConfig({ file: flags.config, flags: cliFlags });
}

/** The verification flags given, as a partial `verification` block (merged over the config file's). */
function verificationFlags(
  flags: GenerateFlags,
  given: (key: keyof GenerateFlags) => boolean,
): ConfigInput['verification'] {
  const verification = {
    ...(given('variants') ? { variants: flags.variants } : {}),
    ...(given('nondeterministicGold') ? { nondeterministicGold: flags.nondeterministicGold as 'reject' } : {}),
    ...(given('weakGold') ? { weakGold: flags.weakGold as 'keep' } : {}),
  };
  return Object.keys(verification).length > 0 ? verification : undefined;
}

/** The LLM flags given, as a partial `llm` block (merged over the config file's). */
function llmFlags(flags: GenerateFlags): ConfigInput['llm'] {
  const llm = {
    ...(flags.llmProvider ? { provider: flags.llmProvider } : {}),
    ...(flags.llmModel ? { model: flags.llmModel } : {}),
    ...(flags.llmBaseUrl ? { baseUrl: flags.llmBaseUrl } : {}),
  };
  return Object.keys(llm).length ? llm : undefined;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof UserFacingError || error instanceof InvariantError) {
      process.stderr.write(`nl2api: ${error.message}\n`);
    } else {
      process.stderr.write(
        `nl2api: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    }
    process.exitCode = EXIT_ERROR;
  }
}

// Run when executed (node dist/cli/main.js, the bin link, tsx), not when imported by tests.
const invoked = process.argv[1] ? pathToFileURL(realpath(process.argv[1])).href : '';
if (invoked === import.meta.url) await main();

function realpath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}
