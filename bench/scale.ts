import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pLimit from 'p-limit';
import { parseConfig } from '../config/load.js';
import { packageRoot } from '../core/package-root.js';
import { goldStatement } from '../generators/sql/gold.js';
import { jsonText, writeFileAtomic } from '../pipeline/files.js';
import { loadSource } from '../pipeline/sources/index.js';
import type { RunStats } from '../pipeline/stats.js';
import { SqlExecutionError, SqlTimeoutError } from '../runtime/sql/executor.js';
import { createSqlPool } from '../runtime/sql/pool.js';
import { nodeArgs } from './node-args.js';
import { measureProcessTree, type TreeMeasure } from './process-tree.js';
import { buildInfoOf, clonedCorpus, defaultScaleDir, inflatedCorpus, type CorpusBuild } from './scale-corpus.js';

/**
 * `npm run bench:scale [-- --bird <dir>] [--sizes small,clones10,x10,x50,x175]
 * [--formulations slot,sel,rest] [--out <results.json>] [--scale-dir <dir>] [--keep] [--no-warm]`:
 * how generation grows with the number of questions and databases (clonesN: every database
 * N times, scale-corpus.ts) and with the size of the databases (xF: every table F times).
 * For each size, in this one invocation and in child processes measured with their whole
 * process tree (process-tree.ts):
 *
 * 1. the floor: every question's gold SQL executed once through the project's SQL process
 *    pool (the config's default worker count, 8 statements in flight, its execute timeout)
 *    by `scale.js --floor <source>`: what any tool answering these questions must pay;
 * 2. a cold `generate` (fresh output and cache, no LLM: REST uses its template synthesizer),
 *    its stats.json (per-stage time) and the size of its run store;
 * 3. a warm rerun (same output and cache), unless --no-warm.
 *
 * Prints one row per size and how each figure grows against the first size, and writes
 * everything as JSON (after each size, so a long run that dies keeps what it measured).
 */

const root = packageRoot();
const MB = 2 ** 20;

/** A statement in flight per SQL worker plus a queue, as the pipeline keeps it busy (config.concurrency's default). */
const FLOOR_IN_FLIGHT = 8;

/**
 * clones10: 10,520 questions over 80 databases; x175: 1.1 GB of databases (bird-dev's 6.3 MB
 * of rows 175 times; 150 times is 0.94 GB).
 */
const DEFAULT_SIZES = 'small,clones10,x10,x50,x175';

interface SizeSpec {
  name: string;
  kind: 'small' | 'clones' | 'inflated';
  n: number;
}

function parseSize(name: string): SizeSpec {
  if (name === 'small') return { name, kind: 'small', n: 1 };
  const clones = /^clones(\d+)$/.exec(name);
  if (clones && Number(clones[1]) >= 1) return { name, kind: 'clones', n: Number(clones[1]) };
  const inflated = /^x(\d+)$/.exec(name);
  if (inflated && Number(inflated[1]) >= 1) return { name, kind: 'inflated', n: Number(inflated[1]) };
  throw new Error(`unknown size ${name}: small, clones<N> or x<factor>`);
}

// ---------------------------------------------------------------------------------------
// The floor (runs in its own process: `scale.js --floor <source>`)

interface FloorQuestion {
  id: string;
  db: string;
  ms: number;
  outcome: 'ok' | 'error' | 'timeout' | 'worker';
}

interface FloorResult {
  questions: number;
  executed: number;
  errors: number;
  timeouts: number;
  /** A worker lost otherwise (a crash, out of memory). */
  workerFailures: number;
  /** Loading the source (questions, schemas; no hashing). */
  loadMs: number;
  /** Executing every gold SQL. */
  executeMs: number;
  /** Sum of the statements' own running times. */
  statementMs: number;
  /** The statements that took longest. */
  slowest: FloorQuestion[];
  /** Every statement that failed or timed out. */
  failed: FloorQuestion[];
}

/**
 * Every question's gold SQL, as the gold stage runs it (double-quoted strings resolved, the
 * clock pinned), once, through the SQL pool. Failures are counted, not fatal.
 */
async function floor(sourceDir: string): Promise<FloorResult> {
  const config = parseConfig({});
  const loadStarted = performance.now();
  // Not hashing the databases: the floor reads no cache, and hashing a gigabyte is not answering questions.
  const source = await loadSource(sourceDir, { fingerprint: async () => 'floor' });
  const loadMs = performance.now() - loadStarted;
  const databases = new Map(source.databases.map((db) => [db.dbId, db]));
  const pool = createSqlPool({ size: config.sqlWorkers, spare: 0, lookahead: 1 });
  const limit = pLimit(FLOOR_IN_FLIGHT);
  const started = performance.now();
  const results = await Promise.all(
    source.instances.map((instance) =>
      limit(async (): Promise<FloorQuestion> => {
        const db = databases.get(instance.dbId)!;
        const { sql } = goldStatement(instance, db, config.referenceTime);
        const asked = performance.now();
        const base = { id: instance.id, db: instance.dbId };
        try {
          const { runMs } = await pool.runTimed({
            dbPath: db.path,
            sql,
            params: [],
            timeoutMs: config.executeTimeoutMs,
          });
          return { ...base, ms: runMs, outcome: 'ok' };
        } catch (error) {
          const ms = performance.now() - asked;
          if (error instanceof SqlTimeoutError) return { ...base, ms, outcome: 'timeout' };
          if (error instanceof SqlExecutionError) return { ...base, ms, outcome: 'error' };
          return { ...base, ms, outcome: 'worker' };
        }
      }),
    ),
  );
  const executeMs = performance.now() - started;
  await pool.close();
  const count = (outcome: FloorQuestion['outcome']) => results.filter((r) => r.outcome === outcome).length;
  return {
    questions: source.instances.length,
    executed: results.length,
    errors: count('error'),
    timeouts: count('timeout'),
    workerFailures: count('worker'),
    loadMs: Math.round(loadMs),
    executeMs: Math.round(executeMs),
    statementMs: Math.round(results.reduce((sum, r) => sum + r.ms, 0)),
    slowest: [...results]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10)
      .map((r) => ({ ...r, ms: Math.round(r.ms) })),
    failed: results.filter((r) => r.outcome !== 'ok').map((r) => ({ ...r, ms: Math.round(r.ms) })),
  };
}

// ---------------------------------------------------------------------------------------
// The bench

interface ProcessFigures {
  wallMs: number;
  cpuMs: number;
  peakTreeRssMb: number;
  peakMainRssMb: number;
  peakProcesses: number;
  exitCode: number | null;
}

interface SizeResult {
  size: string;
  source: string;
  questions: number;
  databases: number;
  dbBytes: number;
  /** How the corpus was built (when it was: `small` is the source itself). */
  corpus?: CorpusBuild & { reused: boolean };
  floor?: ProcessFigures & { result?: FloorResult; error?: string };
  cold?: ProcessFigures & {
    error?: string;
    runStoreBytes: number;
    outputBytes: number;
    stages: RunStats['timing']['stages'];
    /** Per formulation: accepted / input. */
    accepted: Record<string, { accepted: number; input: number; rejectedBy: Record<string, number> }>;
    pipelinePeakRssMb: number;
  };
  warm?: ProcessFigures & { outputsReused: boolean; error?: string };
  /** The machine's 1-minute load average before and after the size's runs: the machine is shared. */
  load: { before: number; after?: number };
}

const figures = (m: TreeMeasure): ProcessFigures => ({
  wallMs: Math.round(m.wallMs),
  cpuMs: Math.round(m.cpuMs),
  peakTreeRssMb: m.peakTreeRssMb,
  peakMainRssMb: m.peakMainRssMb,
  peakProcesses: m.peakProcesses,
  exitCode: m.exitCode,
});

/** Bytes on disk (allocated blocks) of everything under `dir`. */
function diskBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) total += diskBytes(file);
    else total += statSync(file).blocks * 512;
  }
  return total;
}

function corpusFacts(dir: string): { questions: number; databases: number; dbBytes: number } {
  const questions = (JSON.parse(readFileSync(path.join(dir, 'dev.json'), 'utf8')) as unknown[]).length;
  const ids = readdirSync(path.join(dir, 'dev_databases')).filter((id) =>
    existsSync(path.join(dir, 'dev_databases', id, `${id}.sqlite`)),
  );
  const dbBytes = ids.reduce((sum, id) => sum + statSync(path.join(dir, 'dev_databases', id, `${id}.sqlite`)).size, 0);
  return { questions, databases: ids.length, dbBytes };
}

async function corpusFor(
  spec: SizeSpec,
  birdDir: string,
  scaleDir: string,
): Promise<{ dir: string; corpus?: SizeResult['corpus'] }> {
  if (spec.kind === 'small') return { dir: birdDir };
  const started = Date.now();
  const dir =
    spec.kind === 'clones'
      ? await clonedCorpus(birdDir, scaleDir, spec.n)
      : await inflatedCorpus(birdDir, scaleDir, spec.n);
  const info = buildInfoOf(dir);
  return { dir, corpus: info && { ...info, reused: Date.parse(info.builtAt) < started } };
}

const tail = (text: string) => text.trim().split('\n').slice(-5).join('\n');

async function measureSize(
  spec: SizeSpec,
  options: { birdDir: string; scaleDir: string; formulations: string; warm: boolean; keep: boolean },
): Promise<SizeResult> {
  const say = (line: string) => process.stderr.write(`[${spec.name}] ${line}\n`);
  say('corpus...');
  const { dir, corpus } = await corpusFor(spec, options.birdDir, options.scaleDir);
  const result: SizeResult = {
    size: spec.name,
    source: dir,
    ...corpusFacts(dir),
    corpus,
    load: { before: os.loadavg()[0] },
  };
  say(
    `${result.questions} questions, ${result.databases} databases, ${(result.dbBytes / MB).toFixed(0)} MB` +
      (corpus
        ? ` (corpus ${corpus.reused ? 'reused; built' : 'built'} in ${(corpus.buildMs / 1000).toFixed(1)} s)`
        : ''),
  );

  say('floor: every gold SQL once through the SQL pool...');
  const floorRun = await measureProcessTree(process.execPath, [...nodeArgs('bench/scale'), '--floor', dir], {
    cwd: root,
  });
  result.floor = figures(floorRun);
  if (floorRun.exitCode === 0) result.floor.result = JSON.parse(floorRun.stdout) as FloorResult;
  else result.floor.error = tail(floorRun.stderr);
  say(`floor ${(floorRun.wallMs / 1000).toFixed(1)} s${result.floor.error ? `, failed: ${result.floor.error}` : ''}`);

  const work = mkdtempSync(path.join(os.tmpdir(), `nl2api-scale-${spec.name}-`));
  try {
    const out = path.join(work, 'out');
    const cache = path.join(work, 'cache');
    const args = [
      ...nodeArgs('cli/main'),
      'generate',
      '--source',
      dir,
      '--out',
      out,
      '--cache-dir',
      cache,
      '--formulations',
      options.formulations,
      '--progress',
      'log',
    ];
    say(`cold generate --formulations ${options.formulations}...`);
    const cold = await measureProcessTree(process.execPath, args, { cwd: root, echoStderr: true });
    const statsFile = path.join(out, 'stats.json');
    const stats =
      cold.exitCode === 0 && existsSync(statsFile)
        ? (JSON.parse(readFileSync(statsFile, 'utf8')) as RunStats)
        : undefined;
    result.cold = {
      ...figures(cold),
      error: stats ? undefined : tail(cold.stderr),
      runStoreBytes: diskBytes(cache),
      outputBytes: diskBytes(out),
      stages: stats?.timing.stages ?? {},
      accepted: Object.fromEntries(
        Object.entries(stats?.formulations ?? {}).map(([f, s]) => [
          f,
          { accepted: s.total.accepted, input: s.total.input, rejectedBy: s.total.rejectedBy },
        ]),
      ),
      pipelinePeakRssMb: stats?.timing.peakRssMb ?? 0,
    };
    say(
      `cold generate ${(cold.wallMs / 1000).toFixed(1)} s${result.cold.error ? `, failed: ${result.cold.error}` : ''}`,
    );
    if (options.warm && stats) {
      say('warm rerun...');
      const warm = await measureProcessTree(process.execPath, args, { cwd: root });
      const warmStats = existsSync(statsFile) ? (JSON.parse(readFileSync(statsFile, 'utf8')) as RunStats) : undefined;
      result.warm = {
        ...figures(warm),
        outputsReused: warmStats?.timing.outputsReused === true,
        error: warm.exitCode === 0 ? undefined : tail(warm.stderr),
      };
      say(`warm rerun ${(warm.wallMs / 1000).toFixed(1)} s`);
    }
  } finally {
    result.load.after = os.loadavg()[0];
    if (options.keep) say(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  return result;
}

// ---------------------------------------------------------------------------------------
// Report

const sec = (ms: number | undefined) => (ms === undefined ? '-' : (ms / 1000).toFixed(1));
const times = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? '-' : `${(a / b).toFixed(2)}x`;

function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '));
}

function reportLines(results: readonly SizeResult[], formulations: readonly string[]): string[] {
  const header = [
    'size',
    'questions',
    'DBs',
    'DB MB',
    'floor s',
    'generate s',
    'wall/floor',
    'cpu/floor',
    'tree RSS MB',
    'main RSS MB',
    'store MB',
    'warm s',
    'load',
    ...formulations.map((f) => `${f} ok`),
  ];
  const rows = results.map((r) => [
    r.size,
    String(r.questions),
    String(r.databases),
    (r.dbBytes / MB).toFixed(0),
    sec(r.floor?.wallMs),
    sec(r.cold?.wallMs),
    times(r.cold?.wallMs, r.floor?.wallMs),
    times(r.cold?.cpuMs, r.floor?.cpuMs),
    String(r.cold?.peakTreeRssMb ?? '-'),
    String(r.cold?.peakMainRssMb ?? '-'),
    r.cold ? (r.cold.runStoreBytes / MB).toFixed(1) : '-',
    sec(r.warm?.wallMs),
    `${r.load.before.toFixed(1)}→${r.load.after?.toFixed(1) ?? '-'}`,
    ...formulations.map((f) => {
      const a = r.cold?.accepted[f];
      return a ? `${a.accepted}/${a.input}` : '-';
    }),
  ]);
  const lines = ['', ...table([header, ...rows])];

  const stages = [...new Set(results.flatMap((r) => Object.keys(r.cold?.stages ?? {})))];
  if (stages.length > 0) {
    // A stage's time is summed over its items, which overlap (several in flight): a share, not a wall time.
    lines.push('', 'per-stage time summed over items, s (runs):');
    lines.push(
      ...table([
        ['stage', ...results.map((r) => r.size)],
        ...stages.map((stage) => [
          stage,
          ...results.map((r) => {
            const m = r.cold?.stages[stage];
            return m ? `${sec(m.ms)} (${m.runs})` : '-';
          }),
        ]),
      ]),
    );
  }

  const floorNotes = results.filter((r) => r.floor?.result && (r.floor.result.errors || r.floor.result.timeouts));
  for (const r of floorNotes) {
    const f = r.floor!.result!;
    lines.push(`${r.size}: floor errors ${f.errors}, timeouts ${f.timeouts}, worker failures ${f.workerFailures}`);
  }
  for (const r of results) {
    const slow = r.floor?.result?.slowest.slice(0, 3) ?? [];
    if (slow.length === 0) continue;
    const share = r.floor!.result!.statementMs ? slow.reduce((s, q) => s + q.ms, 0) / r.floor!.result!.statementMs : 0;
    lines.push(
      `${r.size}: slowest gold SQL ${slow.map((q) => `${q.db}/${q.id} ${sec(q.ms)} s${q.outcome === 'ok' ? '' : ` (${q.outcome})`}`).join(', ')} = ${(100 * share).toFixed(0)} % of the floor's statement time`,
    );
  }

  lines.push(...rejectionLines(results, formulations));
  lines.push('', ...growthLines(results));
  return lines;
}

/**
 * Rejection categories that grew faster than the questions against the first size (larger
 * databases change answers: more ties under a LIMIT, gold past its timeout).
 */
function rejectionLines(results: readonly SizeResult[], formulations: readonly string[]): string[] {
  const ref = results[0];
  if (!ref?.cold || results.length < 2) return [];
  const lines: string[] = [];
  for (const r of results.slice(1)) {
    for (const f of formulations) {
      const now = r.cold?.accepted[f]?.rejectedBy ?? {};
      const before = ref.cold.accepted[f]?.rejectedBy ?? {};
      const scale = r.questions / ref.questions;
      const grown = Object.entries(now)
        .filter(([category, n]) => n > (before[category] ?? 0) * scale)
        .map(([category, n]) => `${category} ${(before[category] ?? 0) * scale}→${n}`);
      if (grown.length > 0)
        lines.push(`${r.size} ${f}: rejections above ${ref.size}'s per question: ${grown.join(', ')}`);
    }
  }
  return lines;
}

/** How each figure grows against the first size: per-question costs, and memory and store as they are. */
function growthLines(results: readonly SizeResult[]): string[] {
  const ref = results[0];
  if (!ref || results.length < 2) return [];
  const perQuestion = (r: SizeResult, ms: number | undefined) => (ms === undefined ? undefined : ms / r.questions);
  const lines = [`growth against ${ref.size} (per question for times and the run store):`];
  for (const r of results.slice(1)) {
    lines.push(
      `  ${r.size}: ${times(r.questions, ref.questions)} questions, ${times(r.databases, ref.databases)} DBs, ${times(r.dbBytes, ref.dbBytes)} DB bytes → ` +
        `floor per question ${times(perQuestion(r, r.floor?.wallMs), perQuestion(ref, ref.floor?.wallMs))}, ` +
        `generate per question ${times(perQuestion(r, r.cold?.wallMs), perQuestion(ref, ref.cold?.wallMs))} ` +
        `(CPU ${times(perQuestion(r, r.cold?.cpuMs), perQuestion(ref, ref.cold?.cpuMs))}), ` +
        `peak tree RSS ${times(r.cold?.peakTreeRssMb, ref.cold?.peakTreeRssMb)}, main RSS ${times(r.cold?.peakMainRssMb, ref.cold?.peakMainRssMb)}, ` +
        `run store per question ${times(perQuestion(r, r.cold?.runStoreBytes), perQuestion(ref, ref.cold?.runStoreBytes))}`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      floor: { type: 'string' },
      bird: { type: 'string' },
      sizes: { type: 'string', default: DEFAULT_SIZES },
      formulations: { type: 'string', default: 'slot,sel,rest' },
      out: { type: 'string' },
      'scale-dir': { type: 'string' },
      keep: { type: 'boolean', default: false },
      'no-warm': { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.floor !== undefined) {
    process.stdout.write(`${JSON.stringify(await floor(values.floor))}\n`);
    return;
  }
  const birdDir = path.resolve(root, values.bird ?? process.env.NL2API_BIRD_DIR ?? '../shared/bird-dev');
  if (!existsSync(birdDir))
    throw new Error(`BIRD directory ${birdDir} not found (pass --bird, or set NL2API_BIRD_DIR)`);
  const scaleDir = path.resolve(values['scale-dir'] ?? defaultScaleDir());
  mkdirSync(scaleDir, { recursive: true });
  const outFile = path.resolve(values.out ?? path.join(scaleDir, 'scale-results.json'));
  const sizes = values.sizes.split(',').map((s) => parseSize(s.trim()));
  const formulations = values.formulations.split(',').map((f) => f.trim());
  const results: SizeResult[] = [];
  const machine = { cpus: os.cpus().length, memoryMb: Math.round(os.totalmem() / MB), node: process.version };
  process.stderr.write(`scale bench on ${birdDir}, corpora in ${scaleDir}, results to ${outFile}\n`);
  for (const spec of sizes) {
    results.push(
      await measureSize(spec, {
        birdDir,
        scaleDir,
        formulations: formulations.join(','),
        warm: !values['no-warm'],
        keep: values.keep,
      }),
    );
    await writeFileAtomic(outFile, jsonText({ machine, birdDir, formulations, sizes: results }));
    process.stderr.write(`${reportLines(results, formulations).join('\n')}\n\n`);
  }
  process.stdout.write(`${reportLines(results, formulations).join('\n')}\n\nresults: ${outFile}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`scale: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
