import { runIfMain } from './run-main.js';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { jsonText, writeFileAtomic } from '../pipeline/files.js';
import { packageRoot } from '../core/package-root.js';
import type { StageProgress } from '../pipeline/queue/registry.js';
import type { RunStats, Tally } from '../pipeline/stats.js';
import { doneIn, startCli, startWorker, waitForProgress, type CliProcess, type WorkerSpec } from './queue-harness.js';
import { startRedisServer, type RedisProcess } from './redis-process.js';
import { startScriptedMistral, type Agent, type Behaviour, type ScriptedMistral } from './scripted-mistral.js';

/**
 * The queue backend's part of the benchmark (`npm run bench`, or on its own:
 * `node dist/bench/queue-bench.js [<bird dir>]`). Every process is real: the built CLI as
 * driver (`generate --queue`) and as `nl2api worker`s, our own redis-server on a free port,
 * the scripted Mistral server (bench/scripted-mistral.ts) answering every call after a fixed
 * delay. Five parts:
 *
 *  1. queue overhead on the deterministic path (SLOT/SEL, cold): in-process vs `--queue`
 *     with local workers, alternated, median of three each; manifests must be identical;
 *  2. scale-out of REST synthesis over 1, 2 and 4 worker processes (LLM through the real
 *     client, 200 ms per call, rate limit not binding, gold warmed beforehand);
 *  3. a binding rate limit held across 4 workers, as observed at the scripted server;
 *  4. the incremental nightly: an unchanged rerun, and a rerun with 10 questions changed;
 *  5. faults (kill -9 of a worker, a Redis restart, a poison job): nothing lost, nothing
 *     duplicated, output equal to the in-process output.
 *
 * NL2API_BENCH_QUEUE=0 skips all of it; NL2API_BENCH_QUEUE_OVERHEAD=0 part 1 (part 5 then
 * makes its own in-process reference run), NL2API_BENCH_QUEUE_LLM=0 parts 2-4,
 * NL2API_BENCH_QUEUE_FAULTS=0 part 5. Needs the built CLI (dist/) and redis-server on PATH.
 */

const LLM_DELAY_MS = 200;
const OVERHEAD_TARGET = 1.5;
const SCALE_BARS: Record<number, number> = { 2: 1.8, 4: 3.2 };
/** Well below what 4 workers reach without a limit on 2 shared cores (600-800/min): 900/min would not bind here. */
const RATE_LIMIT_RPM = 360;
const UNLIMITED_RPM = 10_000_000;
const RATE_WORKER_CONCURRENCY = 4;
const RATE_TOLERANCE = 0.05;
const NIGHTLY_TARGET = 0.1;
const CHANGED_QUESTIONS = 10;
const FAULT_AT = 0.3;
/** The databases of the rate-limit run (~70 synthesis calls: ~12 s at 360/min). */
const RATE_DBS = ['california_schools', 'debit_card_specializing', 'financial'];
const API_ENV = { MISTRAL_API_KEY: 'bench-scripted' };

export interface QueueBenchResult {
  /** For output/bench.json. */
  report: Record<string, unknown>;
  /** The printed figures. */
  lines: string[];
}

const enabled = (name: string) => process.env[name] !== '0';
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2
    ? sorted[(sorted.length - 1) / 2]
    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};
const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tail = (text: string, lines = 15) => text.trim().split('\n').slice(-lines).join('\n');

/** Every child process the bench starts, until it exits: what cleanup must end. */
const live = new Set<CliProcess>();
/** Set by SIGINT/SIGTERM: nothing new is started, so that the bench unwinds into its cleanup. */
let interrupted = false;

function track(process_: CliProcess): CliProcess {
  if (interrupted) {
    process_.child.kill('SIGKILL');
    throw new Error('interrupted');
  }
  live.add(process_);
  void process_.exited.then(() => live.delete(process_));
  return process_;
}

const alive = (p: CliProcess) => p.child.exitCode === null && p.child.signalCode === null;

async function killAll(): Promise<void> {
  const processes = [...live];
  for (const p of processes) if (alive(p)) p.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => p.exited));
}

/** SIGTERM (the worker finishes its jobs in hand), SIGKILL if it takes longer than `graceMs`. */
async function stopProcesses(processes: readonly CliProcess[], graceMs = 15_000): Promise<void> {
  await Promise.all(
    processes.map(async (p) => {
      if (!alive(p)) return p.exited;
      p.child.kill('SIGTERM');
      const timer = setTimeout(() => alive(p) && p.child.kill('SIGKILL'), graceMs);
      await p.exited;
      clearTimeout(timer);
    }),
  );
}

/** A worker process, returned once it listens on its queues (its startup is not measured). */
async function readyWorker(spec: WorkerSpec): Promise<CliProcess> {
  const worker = track(startWorker(spec));
  const deadline = Date.now() + 30_000;
  while (!/worker: \d+ queues/.test(worker.stderr())) {
    if (!alive(worker)) throw new Error(`worker exited before it was ready:\n${tail(worker.stderr())}`);
    if (Date.now() > deadline) throw new Error(`worker not ready within 30 s:\n${tail(worker.stderr())}`);
    await sleep(20);
  }
  return worker;
}

interface GenerateRun {
  out: string;
  wallMs: number;
  stats: RunStats;
  /** Date.now() when the process was started (for timelines against the scripted server's clock). */
  startedAt: number;
  endedAt: number;
  stderr: string;
}

interface Driver {
  process: CliProcess;
  out: string;
  started: number;
  startedAt: number;
}

function startGenerate(args: readonly string[], out: string, env: NodeJS.ProcessEnv = {}): Driver {
  const startedAt = Date.now();
  const started = performance.now();
  const process_ = track(startCli(['generate', '--progress', 'none', '--out', out, ...args], env));
  return { process: process_, out, started, startedAt };
}

async function finishGenerate(driver: Driver): Promise<GenerateRun> {
  const code = await driver.process.exited;
  const wallMs = performance.now() - driver.started;
  const endedAt = Date.now();
  if (code !== 0) throw new Error(`generate exited with ${code}:\n${tail(driver.process.stderr())}`);
  const stats = JSON.parse(readFileSync(path.join(driver.out, 'stats.json'), 'utf8')) as RunStats;
  return { out: driver.out, wallMs, stats, startedAt: driver.startedAt, endedAt, stderr: driver.process.stderr() };
}

const generate = (args: readonly string[], out: string, env: NodeJS.ProcessEnv = {}) =>
  finishGenerate(startGenerate(args, out, env));

const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');

/** Machine-wide CPU time (all cores), from /proc/stat; undefined off Linux. */
function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0);
    const total = fields.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

const busyShare = (before?: { busy: number; total: number }, after?: { busy: number; total: number }) =>
  before && after && after.total > before.total ? (after.busy - before.busy) / (after.total - before.total) : undefined;

/** CPU seconds of a process and its live descendants (its SQL worker processes), from /proc; undefined off Linux. */
function treeCpuSeconds(rootPid: number | undefined): number | undefined {
  if (rootPid === undefined) return undefined;
  try {
    const procs = new Map<number, { ppid: number; ticks: number }>();
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const text = readFileSync(`/proc/${name}/stat`, 'utf8');
        const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
        procs.set(Number(name), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
      } catch {
        // gone meanwhile
      }
    }
    let ticks = 0;
    const stack = [rootPid];
    while (stack.length) {
      const pid = stack.pop()!;
      ticks += procs.get(pid)?.ticks ?? 0;
      for (const [child, p] of procs) if (p.ppid === pid) stack.push(child);
    }
    return ticks / 100; // USER_HZ
  } catch {
    return undefined;
  }
}

/** What the scripted server saw, with arrival times (recorded by wrapping the behaviour). */
interface Arrival {
  agent: Agent;
  at: number;
  instances: string[];
}

function timedBehaviour(arrivals: Arrival[]): Behaviour {
  const reply = (delayMs: number) => ({ delayMs });
  return {
    synthesisReply: (ctx) => {
      arrivals.push({ agent: 'synthesis', at: Date.now(), instances: ctx.instances.map((i) => i.id) });
      return reply(LLM_DELAY_MS);
    },
    judge: () => {
      arrivals.push({ agent: 'judge', at: Date.now(), instances: [] });
      return {
        delayMs: LLM_DELAY_MS,
        content: JSON.stringify({ verdict: 'yes', rationale: 'scripted: the response holds the asked values' }),
      };
    },
    dedup: () => {
      arrivals.push({ agent: 'dedup', at: Date.now(), instances: [] });
      return { delayMs: LLM_DELAY_MS, content: JSON.stringify({ merges: [] }) };
    },
  };
}

const byAgent = (arrivals: readonly Arrival[]) => {
  const counts: Record<string, number> = { synthesis: 0, judge: 0, dedup: 0 };
  for (const a of arrivals) counts[a.agent] = (counts[a.agent] ?? 0) + 1;
  return counts;
};
const agentText = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([agent, n]) => `${agent} ${n}`)
    .join(', ') || 'none';

/** Ids per formulation in an output directory: accepted (sample lines) and rejected (rejections.jsonl). */
function outcomesOf(
  dir: string,
  formulations: readonly string[],
): Map<string, { accepted: string[]; rejected: string[] }> {
  const outcomes = new Map(formulations.map((f) => [f, { accepted: [] as string[], rejected: [] as string[] }]));
  for (const f of formulations) {
    const samplesDir = path.join(dir, f);
    if (!existsSync(samplesDir)) continue;
    for (const file of readdirSync(samplesDir)
      .filter((name) => name.endsWith('.jsonl'))
      .sort()) {
      for (const line of read(samplesDir, file).split('\n').filter(Boolean))
        outcomes.get(f)!.accepted.push((JSON.parse(line) as { sample_id: string }).sample_id);
    }
  }
  for (const line of read(dir, 'rejections.jsonl').split('\n').filter(Boolean)) {
    const rejection = JSON.parse(line) as { id: string; formulation: string };
    outcomes.get(rejection.formulation)?.rejected.push(rejection.id);
  }
  return outcomes;
}

/** Instances lost (in the reference, nowhere here) and duplicated (more than one outcome here), per formulation. */
function lostAndDuplicated(dir: string, reference: string, formulations: readonly string[]) {
  const mine = outcomesOf(dir, formulations);
  const theirs = outcomesOf(reference, formulations);
  const result: Record<string, { outcomes: number; lost: string[]; duplicated: string[] }> = {};
  for (const f of formulations) {
    const ids = [...mine.get(f)!.accepted, ...mine.get(f)!.rejected];
    const seen = new Set<string>();
    const duplicated = new Set<string>();
    for (const id of ids) (seen.has(id) ? duplicated : seen).add(id);
    const expected = new Set([...theirs.get(f)!.accepted, ...theirs.get(f)!.rejected]);
    result[f] = {
      outcomes: ids.length,
      lost: [...expected].filter((id) => !seen.has(id)),
      duplicated: [...duplicated],
    };
  }
  return result;
}

const countsAddUp = (stats: RunStats) =>
  Object.values(stats.formulations).every(
    (s) =>
      s.total.input === s.total.accepted + s.total.rejected &&
      Object.values(s.byDb).every((t: Tally) => t.input === t.accepted + t.rejected),
  );

const countsText = (stats: RunStats) =>
  Object.entries(stats.formulations)
    .map(([f, s]) => `${f} ${s.total.accepted}+${s.total.rejected}=${s.total.input}`)
    .join(', ');

interface Question {
  question_id: number;
  db_id: string;
  question: string;
}

/** A copy of the BIRD source in `dir`: its question file as `edit` makes it, everything else linked. */
function sourceCopy(birdDir: string, dir: string, edit: (questions: Question[]) => Question[]): string {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(birdDir))
    if (name !== 'dev.json') symlinkSync(path.join(birdDir, name), path.join(dir, name));
  const questions = JSON.parse(readFileSync(path.join(birdDir, 'dev.json'), 'utf8')) as Question[];
  writeFileSync(path.join(dir, 'dev.json'), JSON.stringify(edit(questions)));
  return dir;
}

/** `count` questions, spread over the file, get a changed text; returns their ids. */
function changeQuestions(questions: Question[], count: number): string[] {
  const changed: string[] = [];
  for (let k = 0; k < count; k++) {
    const q = questions[Math.floor(((k + 0.5) * questions.length) / count)];
    q.question = `${q.question} (Answer with the exact values.)`;
    changed.push(String(q.question_id));
  }
  return changed;
}

/** Newest modification time of the built code cache keys depend on: a rebuild during the bench changes every key. */
function builtCodeMtime(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else newest = Math.max(newest, statSync(file).mtimeMs);
    }
  };
  for (const dir of ['config', 'generators', 'pipeline', 'runtime', 'verifiers']) {
    const full = path.join(packageRoot(), 'dist', dir);
    if (existsSync(full)) walk(full);
  }
  return newest;
}

/** The driver's plan line: how many jobs of each kind the run needed. */
const planOf = (stderr: string) =>
  /: (\d+ item jobs, \d+ synthesis batches, \d+ databases)/.exec(stderr)?.[1] ?? 'plan line not found';

export async function queueBench(
  birdDir: string,
  work: string,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<QueueBenchResult> {
  const lines: string[] = [];
  const report: Record<string, unknown> = {};
  if (!enabled('NL2API_BENCH_QUEUE')) {
    lines.push('queue backend: skipped (NL2API_BENCH_QUEUE=0)');
    return { report: { skipped: true }, lines };
  }
  const root = mkdtempSync(path.join(work, 'nl2api-queue-'));
  const builtAt = builtCodeMtime();
  const sectionStarted = performance.now();
  const tag = randomBytes(3).toString('hex');
  let redis: RedisProcess | undefined;
  let persistent: RedisProcess | undefined;
  let mistral: ScriptedMistral | undefined;
  // Ctrl-C or a kill of the bench: start nothing more, end every process we started, remove
  // our files, exit (a wait on a dead run or server would otherwise hold the bench for minutes).
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`queue bench: ${signal}: stopping its processes`);
    void (async () => {
      await killAll();
      await mistral?.close().catch(() => {});
      await redis?.stop().catch(() => {});
      await persistent?.stop().catch(() => {});
      rmSync(root, { recursive: true, force: true });
      process.exit(130);
    })();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    redis = await startRedisServer({ persistence: false });
    lines.push(
      `queue backend (own redis-server ${redis.url}, no persistence, for parts 1-4; BullMQ; built CLI as driver and workers):`,
    );

    // ---- 1. overhead on the deterministic path -------------------------------------------
    const base = ['--source', birdDir, '--formulations', 'slot,sel'];
    const inProcessRun = (k: number) =>
      generate([...base, '--cache-dir', path.join(root, `q1-in-${k}-cache`)], path.join(root, `q1-in-${k}`));
    let reference: string | undefined;
    if (enabled('NL2API_BENCH_QUEUE_OVERHEAD')) {
      log('(q1) queue overhead, SLOT/SEL cold: in-process vs --queue (local workers), alternated, 3 each...');
      const inProcess: GenerateRun[] = [];
      const queued: GenerateRun[] = [];
      for (const k of [1, 2, 3]) {
        inProcess.push(await inProcessRun(k));
        queued.push(
          await generate(
            [
              ...base,
              '--cache-dir',
              path.join(root, `q1-queue-${k}-cache`),
              '--queue',
              redis.url,
              '--queue-prefix',
              `bq${tag}-q1-${k}`,
            ],
            path.join(root, `q1-queue-${k}`),
          ),
        );
      }
      reference = inProcess[0].out;
      const referenceManifest = read(reference, 'manifest.json');
      const identical = [...inProcess, ...queued].every((r) => read(r.out, 'manifest.json') === referenceManifest);
      const inMs = median(inProcess.map((r) => r.wallMs));
      const queueMs = median(queued.map((r) => r.wallMs));
      report.overhead = {
        command:
          'generate --source <bird> --formulations slot,sel --cache-dir <fresh> [--queue <url> --queue-prefix <fresh>]',
        inProcessMs: Math.round(inMs),
        inProcessRunsMs: inProcess.map((r) => Math.round(r.wallMs)),
        queueMs: Math.round(queueMs),
        queueRunsMs: queued.map((r) => Math.round(r.wallMs)),
        ratio: queueMs / inMs,
        target: `<= ${OVERHEAD_TARGET}x`,
        manifestsIdentical: identical,
        counts: countsText(queued[0].stats),
      };
      lines.push(
        `  (1) overhead, SLOT/SEL cold (fresh --cache-dir and --queue-prefix), \`generate --source <bird> --formulations slot,sel\` vs the same with \`--queue <url>\` (local workers, concurrency 8), alternated:`,
        `      in-process ${fmt(inMs)} (median of ${inProcess.map((r) => fmt(r.wallMs)).join(', ')}); queue ${fmt(queueMs)} (median of ${queued.map((r) => fmt(r.wallMs)).join(', ')}); ratio ${(queueMs / inMs).toFixed(2)}x (target <= ${OVERHEAD_TARGET}x: ${ok(queueMs / inMs <= OVERHEAD_TARGET)})`,
        `      manifest.json byte-identical across all ${inProcess.length + queued.length} runs: ${identical ? 'yes' : 'NO'}; ${countsText(queued[0].stats)}`,
      );
    } else {
      lines.push('  (1) overhead: skipped (NL2API_BENCH_QUEUE_OVERHEAD=0)');
    }

    // ---- 2-4. REST with the LLM through the real client --------------------------------
    if (enabled('NL2API_BENCH_QUEUE_LLM')) {
      const arrivals: Arrival[] = [];
      mistral = await startScriptedMistral(timedBehaviour(arrivals));
      const prefix = `bq${tag}-llm`;
      const driverCache = path.join(root, 'llm-driver-cache');
      const configFile = (name: string, llm: Record<string, unknown>) => {
        const file = path.join(root, `${name}.json`);
        writeFileSync(file, JSON.stringify({ rest: { dedupAgent: false }, llm }));
        return file;
      };
      const unlimited = configFile('config-unlimited', { requestsPerMinute: UNLIMITED_RPM });
      const restArgs = (source: string, model: string, config: string, runId: string) => [
        '--source',
        source,
        '--formulations',
        'rest',
        '--cache-dir',
        driverCache,
        '--queue',
        redis!.url,
        '--queue-prefix',
        prefix,
        '--no-local-workers',
        '--run',
        runId,
        '--llm-provider',
        'mistral',
        '--llm-model',
        model,
        '--llm-base-url',
        mistral!.url,
        '--config',
        config,
      ];
      const workersOf = async (n: number, concurrency: number) => {
        const started: CliProcess[] = [];
        try {
          for (let i = 0; i < n; i++)
            started.push(
              await readyWorker({ url: redis!.url, prefix, concurrency, lockDurationMs: 30_000, env: API_ENV }),
            );
        } catch (error) {
          await stopProcesses(started);
          throw error;
        }
        return started;
      };
      /** A driver run against `n` fresh, ready workers; the workers' CPU during the run is read before they stop. */
      const withWorkers = async (n: number, concurrency: number, args: string[], out: string) => {
        const workers = await workersOf(n, concurrency);
        try {
          const cpuAtReady = workers.map((w) => treeCpuSeconds(w.child.pid));
          const from = arrivals.length;
          const cpuBefore = machineCpu();
          const run = await generate(args, out, API_ENV);
          const machineBusy = busyShare(cpuBefore, machineCpu());
          const cpuAtEnd = workers.map((w) => treeCpuSeconds(w.child.pid));
          const known = [...cpuAtReady, ...cpuAtEnd].every((v) => v !== undefined);
          const workerCpuS = known ? cpuAtEnd.reduce((sum: number, v, i) => sum + v! - cpuAtReady[i]!, 0) : undefined;
          return { run, seen: arrivals.slice(from), machineBusy, workerCpuS };
        } finally {
          await stopProcesses(workers);
        }
      };

      log('(q2) warming gold on the queue prefix (template synthesizer, local workers)...');
      const warm = await generate(
        [
          '--source',
          birdDir,
          '--formulations',
          'rest',
          '--synthesizer',
          'template',
          '--cache-dir',
          driverCache,
          '--queue',
          redis.url,
          '--queue-prefix',
          prefix,
        ],
        path.join(root, 'q2-warm'),
      );
      lines.push(
        `  (2) scale-out, REST only, LLM synthesizer through the real Mistral client against the scripted server (${LLM_DELAY_MS} ms per call, every answer correct), config file {rest: {dedupAgent: false}, llm: {requestsPerMinute: ${UNLIMITED_RPM}}}: dedup agent off (measures synthesis; judge on), rate limit not binding; gold warmed first on the same prefix (template REST run, ${fmt(warm.wallMs)}, not measured); a fresh --llm-model per N;`,
        `      driver \`generate --source <bird> --formulations rest --queue <url> --queue-prefix <p> --no-local-workers --llm-provider mistral --llm-model scripted-scale-nN --llm-base-url <scripted> --config <file>\` + N × \`worker --concurrency 1\` (started and ready before the driver; wall = driver process start to exit):`,
      );
      const scale: {
        n: number;
        model: string;
        wallMs: number;
        instancesPerS: number;
        run: GenerateRun;
        seen: Arrival[];
        machineBusy?: number;
        workerCpuS?: number;
        synthWindowMs: number;
        beforeMs: number;
        afterMs: number;
      }[] = [];
      for (const n of [1, 2, 4]) {
        log(`(q2) scale-out: ${n} worker(s)...`);
        const model = `scripted-scale-n${n}`;
        const { run, seen, machineBusy, workerCpuS } = await withWorkers(
          n,
          1,
          restArgs(birdDir, model, unlimited, `scale-n${n}`),
          path.join(root, `q2-n${n}`),
        );
        const synth = seen.filter((a) => a.agent === 'synthesis');
        const first = synth.length ? synth[0].at : run.startedAt;
        const last = synth.length ? synth[synth.length - 1].at : run.startedAt;
        const input = run.stats.formulations.rest!.total.input;
        scale.push({
          n,
          model,
          wallMs: run.wallMs,
          instancesPerS: input / (run.wallMs / 1000),
          run,
          seen,
          machineBusy,
          workerCpuS,
          synthWindowMs: last - first + LLM_DELAY_MS,
          beforeMs: first - run.startedAt,
          afterMs: run.endedAt - last - LLM_DELAY_MS,
        });
      }
      const one = scale[0];
      const rpmOf = (seen: readonly Arrival[]) => {
        const t = seen.map((a) => a.at).sort((x, y) => x - y);
        return t.length > 1 ? ((t.length - 1) / (t[t.length - 1] - t[0])) * 60_000 : undefined;
      };
      report.scaleOut = {
        config: {
          rest: { dedupAgent: false },
          llm: { requestsPerMinute: UNLIMITED_RPM },
          llmDelayMs: LLM_DELAY_MS,
          workerConcurrency: 1,
        },
        goldWarmMs: Math.round(warm.wallMs),
        runs: scale.map((s) => ({
          workers: s.n,
          model: s.model,
          plan: planOf(s.run.stderr),
          wallMs: Math.round(s.wallMs),
          statsWallMs: s.run.stats.timing.wallMs,
          instancesPerS: s.instancesPerS,
          throughputRatioTo1: s.instancesPerS / one.instancesPerS,
          bar: SCALE_BARS[s.n] ? `>= ${SCALE_BARS[s.n]}` : undefined,
          requestsAtServer: s.seen.length,
          requestsByAgent: byAgent(s.seen),
          requestsPerMinute: rpmOf(s.seen),
          statsLlmRequests: s.run.stats.timing.llm?.total.requests,
          rest: s.run.stats.formulations.rest!.total,
          timelineMs: {
            driverStartToFirstSynthesis: Math.round(s.beforeMs),
            synthesisWindow: Math.round(s.synthWindowMs),
            lastSynthesisToDriverExit: Math.round(s.afterMs),
          },
          llmFloorMs: Math.round((byAgent(s.seen).synthesis * LLM_DELAY_MS) / s.n),
          workerCpuS: s.workerCpuS,
          machineCpuBusyPct: s.machineBusy === undefined ? undefined : 100 * s.machineBusy,
          stages: s.run.stats.timing.stages,
        })),
      };
      for (const s of scale) {
        const counts = byAgent(s.seen);
        const ratio = s.instancesPerS / one.instancesPerS;
        const bar = SCALE_BARS[s.n];
        lines.push(
          `      N=${s.n}: wall ${fmt(s.wallMs)}, ${s.instancesPerS.toFixed(1)} instances/s (${s.run.stats.formulations.rest!.total.input} instances, ${s.run.stats.formulations.rest!.total.accepted} accepted)${bar ? `, throughput ${s.n}/1 ${ratio.toFixed(3)}x (bar >= ${bar}: ${ok(ratio >= bar)})` : ''}; LLM requests at the server ${s.seen.length} (${agentText(counts)}; stats.json ${s.run.stats.timing.llm?.total.requests ?? '?'}), ${rpmOf(s.seen)?.toFixed(0) ?? '?'}/min; plan: ${planOf(s.run.stderr)}`,
          `           timeline: driver start → first synthesis call ${fmt(s.beforeMs)}, synthesis window ${fmt(s.synthWindowMs)} (floor ${counts.synthesis} calls × ${LLM_DELAY_MS} ms / ${s.n} = ${fmt((counts.synthesis * LLM_DELAY_MS) / s.n)}), last synthesis reply → driver exit ${fmt(s.afterMs)}; workers' CPU during the run ${s.workerCpuS?.toFixed(1) ?? '?'} s (SQL processes included); machine CPU busy ${s.machineBusy === undefined ? '?' : (100 * s.machineBusy).toFixed(0)}% of ${os.cpus().length} cores`,
        );
      }
      const windowRatio = (s: (typeof scale)[number]) => one.synthWindowMs / s.synthWindowMs;
      const fixed = (s: (typeof scale)[number]) => s.beforeMs + s.afterMs;
      const cpuPerInstance = (s: (typeof scale)[number]) =>
        s.workerCpuS === undefined
          ? '?'
          : `${((1000 * s.workerCpuS) / s.run.stats.formulations.rest!.total.input).toFixed(1)} ms`;
      const amdahl = (n: number) => (fixed(one) + one.synthWindowMs) / (fixed(one) + one.synthWindowMs / n);
      lines.push(
        `      synthesis-window speed-up: ${scale
          .slice(1)
          .map((s) => `${s.n}/1 ${windowRatio(s).toFixed(2)}x`)
          .join(
            ', ',
          )}; time outside the window (startup, ingest, planning, last dedup/verify, assembly, emit): ${scale.map((s) => `N=${s.n} ${fmt(fixed(s))}`).join(', ')}`,
      );
      lines.push(
        `      diagnosis: with N=1's time outside the window (${fmt(fixed(one))}) and a window that scaled perfectly, throughput could reach 2/1 ${amdahl(2).toFixed(2)}x, 4/1 ${amdahl(4).toFixed(2)}x; workers' CPU per instance ${scale.map((s) => `N=${s.n} ${cpuPerInstance(s)}`).join(', ')} (same work: the rest is per-worker setup and contention); the window's excess over its LLM floor per call and worker: ${scale.map((s) => `N=${s.n} ${(((s.synthWindowMs - (byAgent(s.seen).synthesis * LLM_DELAY_MS) / s.n) * s.n) / Math.max(1, byAgent(s.seen).synthesis)).toFixed(0)} ms`).join(', ')}`,
      );

      // ---- 3. a binding rate limit across 4 workers ----
      log('(q3) rate limit across 4 workers...');
      const limited = configFile('config-limited', { requestsPerMinute: RATE_LIMIT_RPM, burst: 1 });
      // A source copy holding these databases' questions only: `--db` is broken on the queue backend (see the report).
      const rateSource = sourceCopy(birdDir, path.join(root, 'rate-source', 'bird-dev'), (questions) =>
        questions.filter((q) => RATE_DBS.includes(q.db_id)),
      );
      // 4 jobs per worker: 16 waiting on the limiter, so that it binds at every moment, not just on average.
      const rate = await withWorkers(
        4,
        RATE_WORKER_CONCURRENCY,
        restArgs(rateSource, 'scripted-ratelimit', limited, 'ratelimit'),
        path.join(root, 'q3'),
      );
      const times = rate.seen.map((a) => a.at).sort((a, b) => a - b);
      const spanMs = times.length > 1 ? times[times.length - 1] - times[0] : 0;
      const observedRpm = spanMs > 0 ? ((times.length - 1) / spanMs) * 60_000 : 0;
      const deviation = observedRpm / RATE_LIMIT_RPM - 1;
      const nominalMs = 60_000 / RATE_LIMIT_RPM;
      const intervals = times.slice(1).map((t, i) => t - times[i]);
      const sortedIntervals = [...intervals].sort((a, b) => a - b);
      const gaps = intervals.map((ms, i) => ({ after: i + 1, ms })).filter((g) => g.ms > 1.5 * nominalMs);
      // Informational only (the bar is over first..last): the rate without the first and last 10% of arrivals.
      const inner = times.slice(Math.floor(times.length * 0.1), Math.ceil(times.length * 0.9));
      const innerRpm =
        inner.length > 1 ? ((inner.length - 1) / (inner[inner.length - 1] - inner[0])) * 60_000 : undefined;
      const unlimitedRpm = rpmOf(scale.find((s) => s.n === 4)?.seen ?? []);
      const binds = unlimitedRpm !== undefined && unlimitedRpm > RATE_LIMIT_RPM * 1.2;
      report.rateLimit = {
        config: {
          llm: { requestsPerMinute: RATE_LIMIT_RPM, burst: 1 },
          workers: 4,
          workerConcurrency: RATE_WORKER_CONCURRENCY,
          dbs: RATE_DBS,
        },
        plan: planOf(rate.run.stderr),
        requests: times.length,
        requestsByAgent: byAgent(rate.seen),
        spanMs,
        observedRpm,
        limitRpm: RATE_LIMIT_RPM,
        deviationPct: 100 * deviation,
        target: `within ${RATE_TOLERANCE * 100}%`,
        unlimitedRpmWith4Workers: unlimitedRpm,
        intervalsMs: intervals,
        intervalMedianMs: sortedIntervals.length ? median(sortedIntervals) : undefined,
        gapsOver1_5xNominal: gaps,
        innerEightyPctRpm: innerRpm,
        rest: rate.run.stats.formulations.rest!.total,
        wallMs: Math.round(rate.run.wallMs),
      };
      lines.push(
        `  (3) rate limit across 4 workers (\`worker --concurrency ${RATE_WORKER_CONCURRENCY}\` each; config llm {requestsPerMinute: ${RATE_LIMIT_RPM}, burst: 1}; REST over a source copy with the questions of ${RATE_DBS.join(', ')}; plan: ${planOf(rate.run.stderr)}):`,
        `      ${times.length} requests (${agentText(byAgent(rate.seen))}) in ${fmt(spanMs)} between first and last arrival → ${observedRpm.toFixed(1)}/min observed vs ${RATE_LIMIT_RPM}/min limit: ${deviation >= 0 ? '+' : ''}${(100 * deviation).toFixed(1)}% (bar within ${RATE_TOLERANCE * 100}%: ${ok(Math.abs(deviation) <= RATE_TOLERANCE)}); without a limit 4 workers × 1 reached ${unlimitedRpm?.toFixed(0) ?? '?'}/min (${binds ? 'the limit binds' : 'WARNING: the limit may not bind'}); ${countsText(rate.run.stats)}`,
        `      inter-arrival: nominal ${nominalMs.toFixed(1)} ms, median ${sortedIntervals.length ? median(sortedIntervals).toFixed(1) : '?'} ms, min ${sortedIntervals[0]?.toFixed(0) ?? '?'} ms, max ${sortedIntervals[sortedIntervals.length - 1]?.toFixed(0) ?? '?'} ms; gaps over 1.5× nominal: ${gaps.map((g) => `${g.ms} ms after request ${g.after}`).join(', ') || 'none'}; rate without the first and last 10% of arrivals ${innerRpm?.toFixed(1) ?? '?'}/min (informational)`,
      );

      // ---- 4. incremental nightly ----
      log('(q4) incremental nightly: unchanged rerun, then 10 questions changed...');
      const unchanged = await withWorkers(
        1,
        1,
        restArgs(birdDir, one.model, unlimited, 'nightly-unchanged'),
        path.join(root, 'q4-unchanged'),
      );
      let changedIds: string[] = [];
      const changedSource = sourceCopy(birdDir, path.join(root, 'changed-source', 'bird-dev'), (questions) => {
        changedIds = changeQuestions(questions, CHANGED_QUESTIONS);
        return questions;
      });
      const changed = await withWorkers(
        1,
        1,
        restArgs(changedSource, one.model, unlimited, 'nightly-changed'),
        path.join(root, 'q4-changed'),
      );
      const synthesizedIds = [
        ...new Set(changed.seen.filter((a) => a.agent === 'synthesis').flatMap((a) => a.instances)),
      ].sort((a, b) => Number(a) - Number(b));
      const exactly =
        synthesizedIds.length === changedIds.length && changedIds.every((id) => synthesizedIds.includes(id));
      const unchangedRatio = unchanged.run.wallMs / one.wallMs;
      const stageText = (stats: RunStats) =>
        Object.entries(stats.timing.stages)
          .map(([stage, m]) => `${stage} ${m.runs} run/${m.cacheHits} cached`)
          .join(', ') || 'none';
      report.nightly = {
        coldMs: Math.round(one.wallMs),
        unchanged: {
          plan: planOf(unchanged.run.stderr),
          wallMs: Math.round(unchanged.run.wallMs),
          ratioToCold: unchangedRatio,
          target: `< ${NIGHTLY_TARGET * 100}%`,
          requestsAtServer: unchanged.seen.length,
          statsLlm: unchanged.run.stats.timing.llm?.total,
          stages: unchanged.run.stats.timing.stages,
          rest: unchanged.run.stats.formulations.rest!.total,
        },
        changed: {
          plan: planOf(changed.run.stderr),
          wallMs: Math.round(changed.run.wallMs),
          ratioToCold: changed.run.wallMs / one.wallMs,
          changedIds,
          synthesizedIds,
          exactlyTheChanged: exactly,
          requestsAtServer: changed.seen.length,
          requestsByAgent: byAgent(changed.seen),
          statsLlm: changed.run.stats.timing.llm?.total,
          stages: changed.run.stats.timing.stages,
          rest: changed.run.stats.formulations.rest!.total,
        },
      };
      lines.push(
        `  (4) incremental nightly, the N=1 configuration again (same prefix and config, model ${one.model}, 1 × \`worker --concurrency 1\`, new out dir):`,
        `      unchanged: ${fmt(unchanged.run.wallMs)} = ${(100 * unchangedRatio).toFixed(1)}% of the cold N=1 run (target < ${NIGHTLY_TARGET * 100}%: ${ok(unchangedRatio < NIGHTLY_TARGET)}); LLM requests at the server ${unchanged.seen.length} (target 0: ${ok(unchanged.seen.length === 0)}); plan: ${planOf(unchanged.run.stderr)}; stages: ${stageText(unchanged.run.stats)}`,
        `      ${CHANGED_QUESTIONS} questions' text changed (source copy, databases linked): ${fmt(changed.run.wallMs)} = ${((100 * changed.run.wallMs) / one.wallMs).toFixed(1)}% of cold; plan: ${planOf(changed.run.stderr)}; synthesized instances (from the prompts) ${synthesizedIds.length}: [${synthesizedIds.join(', ')}] — exactly the changed [${changedIds.join(', ')}]: ${exactly ? 'yes' : 'NO'}; LLM requests ${changed.seen.length} (${agentText(byAgent(changed.seen))}; stats.json ${changed.run.stats.timing.llm?.total.requests ?? '?'} requests, ${changed.run.stats.timing.llm?.total.cacheHits ?? '?'} cache hits); stages: ${stageText(changed.run.stats)}; ${countsText(changed.run.stats)}`,
      );
      await mistral.close();
      mistral = undefined;
    } else {
      lines.push('  (2)-(4) REST scale-out, rate limit, nightly: skipped (NL2API_BENCH_QUEUE_LLM=0)');
    }
    await redis.stop();
    redis = undefined;

    // ---- 5. faults -------------------------------------------------------------------
    if (enabled('NL2API_BENCH_QUEUE_FAULTS')) {
      if (!reference) {
        log('(q5) the in-process reference run...');
        reference = (await inProcessRun(0)).out;
      }
      const referenceDir: string = reference;
      const referenceManifest = read(referenceDir, 'manifest.json');
      persistent = await startRedisServer({ persistence: true });
      const formulations = ['slot', 'sel'];
      const url = persistent.url;
      lines.push(
        `  (5) faults, SLOT/SEL over bird-dev, own redis-server with AOF (fsync always), driver \`generate --queue <url> --no-local-workers\` + 2 × \`worker --concurrency 2 --lock-duration 2000\`; each compared with the in-process output of (1):`,
      );
      const faults: Record<string, unknown> = {};
      const referenceGoldRuns =
        (JSON.parse(read(referenceDir, 'stats.json')) as RunStats).timing.stages.gold?.runs ?? 0;
      const scenario = async (
        name: string,
        fault: (ctx: {
          prefix: string;
          runId: string;
          workers: CliProcess[];
          spawnWorker: () => CliProcess;
          planned: number;
        }) => Promise<Record<string, unknown>>,
        env: NodeJS.ProcessEnv = {},
      ) => {
        log(`(q5) fault: ${name}...`);
        const prefix = `bq${tag}-f-${name}`;
        const runId = `fault-${name}`;
        const workers: CliProcess[] = [];
        let supervising = true;
        let restarts = 0;
        let firstDeath: Promise<number> | undefined;
        const spawnWorker = (): CliProcess => {
          const w = track(startWorker({ url, prefix, concurrency: 2, lockDurationMs: 2000, env }));
          workers.push(w);
          // Poison only: a supervisor restarts what dies, as systemd or Kubernetes would.
          if (env.NL2API_POISON)
            void w.exited.then(() => {
              if (supervising && !interrupted) {
                restarts++;
                firstDeath ??= waitForProgress(url, prefix, runId, () => true).then(
                  (p) => doneIn(p, 'item'),
                  () => -1,
                );
                spawnWorker();
              }
            });
          return w;
        };
        spawnWorker();
        spawnWorker();
        try {
          const driver = startGenerate(
            [
              '--source',
              birdDir,
              '--formulations',
              'slot,sel',
              '--cache-dir',
              path.join(root, `q5-${name}-cache`),
              '--queue',
              url,
              '--queue-prefix',
              prefix,
              '--no-local-workers',
              '--run',
              runId,
            ],
            path.join(root, `q5-${name}`),
          );
          const planned = (
            await waitForProgress(
              url,
              prefix,
              runId,
              (p) => (p.find((g) => g.group === 'item')?.total ?? 0) > 0,
              120_000,
            )
          ).find((g) => g.group === 'item')!.total;
          const atFault = await fault({ prefix, runId, workers, spawnWorker, planned });
          const run = await finishGenerate(driver);
          supervising = false;
          if (firstDeath) atFault.doneAtFault = await firstDeath;
          const after: StageProgress[] = await waitForProgress(url, prefix, runId, () => true);
          const sameManifest = read(run.out, 'manifest.json') === referenceManifest;
          const accounting = lostAndDuplicated(run.out, referenceDir, formulations);
          const result: Record<string, unknown> = {
            plannedItemJobs: planned,
            ...atFault,
            wallMs: Math.round(run.wallMs),
            workerProcesses: workers.length,
            supervisorRestarts: restarts,
            progressAfter: after,
            counts: Object.fromEntries(
              Object.entries(run.stats.formulations).map(([f, s]) => [
                f,
                {
                  input: s.total.input,
                  accepted: s.total.accepted,
                  rejected: s.total.rejected,
                  rejectedBy: s.total.rejectedBy,
                },
              ]),
            ),
            inputEqualsAcceptedPlusRejected: countsAddUp(run.stats),
            manifestEqualsInProcess: sameManifest,
            accounting,
            goldRuns: run.stats.timing.stages.gold?.runs,
            goldRunsInProcess: referenceGoldRuns,
            stageRuns: Object.fromEntries(Object.entries(run.stats.timing.stages).map(([s, m]) => [s, m.runs])),
          };
          return { run, result };
        } finally {
          supervising = false;
          await stopProcesses(workers, 5000);
        }
      };
      const faultLines = (name: string, result: Record<string, unknown>, stats: RunStats, extra: string) => {
        const { plannedItemJobs, doneAtFault, goldRuns, goldRunsInProcess } = result as {
          plannedItemJobs: number;
          doneAtFault?: number;
          goldRuns?: number;
          goldRunsInProcess?: number;
        };
        const accounting = result.accounting as ReturnType<typeof lostAndDuplicated>;
        const lost = Object.values(accounting).reduce((n, a) => n + a.lost.length, 0);
        const duplicated = Object.values(accounting).reduce((n, a) => n + a.duplicated.length, 0);
        const progress = (result.progressAfter as StageProgress[]).find((p) => p.group === 'item');
        lines.push(
          `      ${name}: ${plannedItemJobs} item jobs planned, ${doneAtFault ?? '?'} done at the fault${doneAtFault !== undefined && name.startsWith('(c)') ? ' (the first worker death)' : ''}; after: ${countsText(stats)} (input = accepted + rejected, per db too: ${result.inputEqualsAcceptedPlusRejected ? 'yes' : 'NO'}); item jobs done ${progress?.done}, failed ${progress?.failed}; gold runs reported by the workers ${goldRuns} (in-process ${goldRunsInProcess}; a killed job's runs are never reported); wall ${fmt(Number(result.wallMs))}`,
          `        rejections: ${Object.entries(stats.formulations)
            .map(
              ([f, s]) =>
                `${f} {${Object.entries(s.total.rejectedBy)
                  .map(([k, n]) => `${k} ${n}`)
                  .join(', ')}}`,
            )
            .join('; ')}`,
          `        outcomes lost ${lost}, duplicated ${duplicated}; ${extra}`,
        );
      };

      // (a) kill -9 of a worker at ~30%, restarted.
      const kill = await scenario('kill', async ({ prefix, runId, workers, spawnWorker, planned }) => {
        const progress = await waitForProgress(
          url,
          prefix,
          runId,
          (p) => doneIn(p, 'item') >= FAULT_AT * planned,
          120_000,
        );
        workers[0].child.kill('SIGKILL');
        await workers[0].exited;
        spawnWorker();
        return { doneAtFault: doneIn(progress, 'item') };
      });
      faults.kill = kill.result;
      faultLines(
        '(a) kill -9 of a worker at ~30%, restarted',
        kill.result,
        kill.run.stats,
        `manifest.json equals the in-process one: ${kill.result.manifestEqualsInProcess ? 'yes' : 'NO'}`,
      );

      // (b) Redis restarted at ~30%.
      const restart = await scenario('redis', async ({ prefix, runId, planned }) => {
        const progress = await waitForProgress(
          url,
          prefix,
          runId,
          (p) => doneIn(p, 'item') >= FAULT_AT * planned,
          120_000,
        );
        const started = performance.now();
        await persistent!.restart();
        return { doneAtFault: doneIn(progress, 'item'), redisDownMs: Math.round(performance.now() - started) };
      });
      faults.redisRestart = restart.result;
      faultLines(
        `(b) redis-server restarted at ~30% (down ${fmt(Number(restart.result.redisDownMs))})`,
        restart.result,
        restart.run.stats,
        `manifest.json equals the in-process one: ${restart.result.manifestEqualsInProcess ? 'yes' : 'NO'}`,
      );

      // (c) a poison job: its instance kills whichever worker touches it.
      const referenceOutcomes = outcomesOf(referenceDir, formulations);
      const acceptedInBoth = referenceOutcomes
        .get('slot')!
        .accepted.filter((id) => referenceOutcomes.get('sel')!.accepted.includes(id));
      const poison = acceptedInBoth[Math.floor(acceptedInBoth.length / 3)];
      const poisoned = await scenario('poison', async () => ({ doneAtFault: undefined }), { NL2API_POISON: poison });
      const out = poisoned.run.out;
      const without = (dir: string, file: string) =>
        existsSync(path.join(dir, file))
          ? read(dir, file)
              .split('\n')
              .filter(
                (line) =>
                  line &&
                  (JSON.parse(line) as { sample_id?: string; id?: string }).sample_id !== poison &&
                  (JSON.parse(line) as { id?: string }).id !== poison,
              )
          : [];
      const sampleFiles = formulations.flatMap((f) =>
        readdirSync(path.join(referenceDir, f))
          .filter((name) => name.endsWith('.jsonl'))
          .map((name) => `${f}/${name}`),
      );
      const differingSamples = sampleFiles.filter(
        (file) => JSON.stringify(without(out, file)) !== JSON.stringify(without(referenceDir, file)),
      );
      const poisonRejections = read(out, 'rejections.jsonl')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { id: string; formulation: string; category: string; message: string })
        .filter((r) => r.id === poison);
      const rejectionsOtherwiseEqual =
        JSON.stringify(without(out, 'rejections.jsonl')) === JSON.stringify(without(referenceDir, 'rejections.jsonl'));
      const manifestFiles = (dir: string) =>
        (JSON.parse(read(dir, 'manifest.json')) as { files: { path: string; sha256: string }[] }).files;
      const refFiles = new Map(manifestFiles(referenceDir).map((f) => [f.path, f.sha256]));
      const otherDiffering = manifestFiles(out)
        .filter((f) => !f.path.endsWith('.jsonl') && refFiles.get(f.path) !== f.sha256)
        .map((f) => f.path);
      const poisonOk =
        differingSamples.length === 0 &&
        rejectionsOtherwiseEqual &&
        poisonRejections.length === formulations.length &&
        poisonRejections.every((r) => r.category === 'job_failed');
      faults.poison = {
        ...poisoned.result,
        poisonedInstance: poison,
        poisonRejections,
        sampleFilesDifferingBeyondThePoisonedLines: differingSamples,
        rejectionsOtherwiseEqual,
        otherFilesDiffering: otherDiffering,
        asExpected: poisonOk,
      };
      faultLines(
        `(c) poison instance ${poison} (NL2API_POISON; dead workers restarted: ${poisoned.result.supervisorRestarts as number})`,
        poisoned.result,
        poisoned.run.stats,
        `its outcomes: ${poisonRejections.map((r) => `${r.formulation} ${r.category} (${r.message.slice(0, 90)})`).join('; ') || 'NONE'}; sample files equal but for its lines: ${differingSamples.length === 0 ? 'yes' : `NO (${differingSamples.join(', ')})`}; rejections.jsonl otherwise equal: ${rejectionsOtherwiseEqual ? 'yes' : 'NO'}; tools/openapi files differing: ${otherDiffering.join(', ') || 'none'} — ${ok(poisonOk)}`,
      );
      report.faults = faults;
    } else {
      lines.push('  (5) faults: skipped (NL2API_BENCH_QUEUE_FAULTS=0)');
    }
    report.sectionMs = Math.round(performance.now() - sectionStarted);
    lines.push(`  queue section: ${fmt(performance.now() - sectionStarted)}`);
    if (builtCodeMtime() !== builtAt) {
      // Every cache key holds the code's fingerprint: runs on either side of a rebuild share nothing.
      lines.push(
        '  WARNING: dist/ was rebuilt while the queue bench ran; cache-dependent figures (nightly, gold warm) are not valid',
      );
      report.distRebuiltDuringBench = true;
    }
    return { report, lines };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await killAll();
    await mistral?.close().catch(() => {});
    await redis?.stop().catch(() => {});
    await persistent?.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

/** `node dist/bench/queue-bench.js [<bird dir>]`: this section alone; writes output/queue-bench.json. */
async function main(): Promise<void> {
  const root = packageRoot();
  const birdDir = path.resolve(root, process.argv[2] ?? process.env.NL2API_BIRD_DIR ?? '../shared/bird-dev');
  if (!existsSync(birdDir)) throw new Error(`BIRD directory ${birdDir} not found (pass it, or set NL2API_BIRD_DIR)`);
  // queueBench makes (and removes) its own temp dir under this one.
  const { report, lines } = await queueBench(birdDir, os.tmpdir());
  process.stdout.write(`${lines.join('\n')}\n`);
  const reportFile = path.join(root, 'output', 'queue-bench.json');
  await writeFileAtomic(reportFile, jsonText({ birdDir, queue: report }));
  process.stdout.write(`report: ${reportFile}\n`);
}

runIfMain(import.meta.url, 'queue bench', main);
