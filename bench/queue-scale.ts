import { runIfMain } from './run-main.js';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { packageRoot } from '../core/package-root.js';
import { jsonText, writeFileAtomic } from '../pipeline/files.js';
import { closeConnection, redisConnection } from '../pipeline/queue/connection.js';
import { STAGE_QUEUES } from '../pipeline/queue/jobs.js';
import { startCli, type CliProcess } from './queue-harness.js';
import { startRedisServer, type RedisProcess } from './redis-process.js';
import { clonedCorpus, defaultScaleDir } from './scale-corpus.js';

/**
 * The queue backend at scale (issue 15): `node dist/bench/queue-scale.js [<source dir>]`.
 * Without a source, 10 clones of each BIRD dev database (bench/scale-corpus.ts: 80
 * databases, 10,520 questions; NL2API_SCALE_COPIES changes the count). SLOT, SEL and REST
 * (template synthesizer, no LLM), cold every time: the in-process `generate` as reference,
 * then `generate --queue --no-local-workers` with 2, 1 and 4 `nl2api worker` processes
 * (NL2API_SCALE_WORKERS="2,1,4"), each on a redis-server of its own started fresh (so its
 * used_memory_peak is this run's) and fresh out and cache folders. Per queue run:
 *
 *  - the output compared file by file (sha256) with the reference, stats.json without its
 *    timing;
 *  - Redis: used_memory_peak, bytes sent to clients, the run spec's keys (head, per-database
 *    chunks) and the largest job payload (a job hash's `data`) per queue;
 *  - wall time and where the CPU went from /proc (driver, workers' own processes, their SQL
 *    worker processes, redis-server), next to the machine's busy share: on a 2-core machine
 *    shared with others, what caps the run;
 *  - memory: peak RSS of the driver and of each worker, and each worker's largest V8 heap
 *    after a full collection (what it held live: the figure that shows whether a worker's
 *    memory follows the databases it works on or the corpus).
 *
 * Every process is started as queue-harness starts it (`node dist/cli/main.js`, without the
 * bin's shebang flags), the reference too. The machine may be shared: CPU seconds are the
 * steadier figure, wall times move with the others' load (the machine's busy share says how much).
 *
 * NL2API_SCALE_REFERENCE=<dir> reuses an in-process output instead of making one.
 * Writes output/queue-scale.json.
 */

const PREFIX = 'scale';
const FORMULATIONS = 'slot,sel,rest';
const WORKER_CONCURRENCY = 4;
const POLL_MS = 500;
const TICKS_PER_SECOND = 100; // USER_HZ
const MB = 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tail = (text: string, lines = 15) => text.trim().split('\n').slice(-lines).join('\n');
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

// ---------------------------------------------------------------- /proc

interface Proc {
  ppid: number;
  /** utime + stime, ticks. */
  ticks: number;
  /** cutime + cstime: reaped children's ticks. */
  childTicks: number;
}

/** Every process, from /proc/<pid>/stat (fields counted from the last ')': the name may hold anything). */
function processes(): Map<number, Proc> {
  const procs = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), {
        ppid: Number(f[1]),
        ticks: Number(f[11]) + Number(f[12]),
        childTicks: Number(f[13]) + Number(f[14]),
      });
    } catch {
      // gone meanwhile
    }
  }
  return procs;
}

function descendantsOf(root: number, procs: ReadonlyMap<number, Proc>): number[] {
  const found: number[] = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    for (const [child, p] of procs) {
      if (p.ppid !== pid) continue;
      found.push(child);
      stack.push(child);
    }
  }
  return found;
}

/** Peak resident memory (VmHWM) of a live process, in bytes. */
function peakRss(pid: number): number | undefined {
  try {
    const kB = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kB ? Number(kB) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A process's CPU over a window, split: its own, and its descendants' (alive, or reaped into its cutime). */
interface TreeCpu {
  own: number;
  children: number;
}

/** The CPU a tree used between two snapshots; exact for the processes reaped meanwhile (their time is in a parent's cutime). */
function treeCpuBetween(root: number, before: ReadonlyMap<number, Proc>, after: ReadonlyMap<number, Proc>): TreeCpu {
  const own = (after.get(root)?.ticks ?? 0) - (before.get(root)?.ticks ?? 0);
  const now = descendantsOf(root, after);
  const then = descendantsOf(root, before);
  let children = 0;
  for (const pid of now) children += after.get(pid)!.ticks - (then.includes(pid) ? (before.get(pid)?.ticks ?? 0) : 0);
  for (const pid of then) if (!after.has(pid)) children -= before.get(pid)?.ticks ?? 0;
  // Reaped descendants: in the cutime of whoever waited for them, within the tree.
  for (const pid of [root, ...now])
    children +=
      (after.get(pid)?.childTicks ?? 0) - (then.includes(pid) || pid === root ? (before.get(pid)?.childTicks ?? 0) : 0);
  return { own: own / TICKS_PER_SECOND, children: children / TICKS_PER_SECOND };
}

/** Machine-wide CPU (all cores), from /proc/stat. */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + (fields[4] ?? 0);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

// ---------------------------------------------------------------- processes

/** Every child process the bench starts, until it exits: what cleanup must end. */
const live = new Set<CliProcess>();
const alive = (p: CliProcess) => p.child.exitCode === null && p.child.signalCode === null;

function track(process_: CliProcess): CliProcess {
  live.add(process_);
  void process_.exited.then(() => live.delete(process_));
  return process_;
}

async function killAll(): Promise<void> {
  const processes_ = [...live];
  for (const p of processes_) if (alive(p)) p.child.kill('SIGKILL');
  await Promise.all(processes_.map((p) => p.exited));
}

/**
 * A worker, listening: `nl2api worker` as queue-harness starts it, with V8's `--trace-gc` (not
 * allowed in NODE_OPTIONS): its heap after each full collection, on its stdout, is the most it
 * held live, which its peak RSS (with garbage not collected yet) is not.
 */
async function readyWorker(url: string): Promise<CliProcess> {
  const args = ['worker', '--queue', url, '--queue-prefix', PREFIX, '--concurrency', String(WORKER_CONCURRENCY)];
  const child = spawn(process.execPath, ['--trace-gc', path.join(packageRoot(), 'dist', 'cli', 'main.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const worker = track({ child, exited, stdout: () => out, stderr: () => err });
  const deadline = Date.now() + 60_000;
  while (!/worker: \d+ queues/.test(worker.stderr())) {
    if (!alive(worker)) throw new Error(`worker exited before it was ready:\n${tail(worker.stderr())}`);
    if (Date.now() > deadline) throw new Error(`worker not ready within 60 s:\n${tail(worker.stderr())}`);
    await sleep(50);
  }
  return worker;
}

async function stopWorkers(workers: readonly CliProcess[]): Promise<void> {
  await Promise.all(
    workers.map(async (w) => {
      if (!alive(w)) return;
      w.child.kill('SIGTERM');
      const timer = setTimeout(() => alive(w) && w.child.kill('SIGKILL'), 20_000);
      await w.exited;
      clearTimeout(timer);
    }),
  );
}

/**
 * The largest heap a process kept after a full collection (MB, V8's trace: `[<pid>:0x…] … Mark-Compact
 * 250.1 (270.3) -> 120.5 (280.1) MB`); its own lines only, not those of the SQL processes it started.
 */
function liveHeapMb(trace: string, pid: number): number {
  let largest = 0;
  for (const match of trace.matchAll(/^\[(\d+):0x[0-9a-f]+\][^\n]*?Mark-Compact[^\n]*?-> ([\d.]+) \(/gm))
    if (Number(match[1]) === pid) largest = Math.max(largest, Number(match[2]));
  return largest;
}

/** What a `generate` process cost: wall, CPU of its tree (exact: from our cutime once it is reaped), its own CPU and peak RSS (polled). */
interface GenerateMeasure {
  wallMs: number;
  cpuS: number;
  ownCpuS: number;
  peakRssBytes: number;
}

/**
 * Runs `generate` to its end. Our own cutime grows by the
 * generate tree's whole CPU when it is reaped; nothing else of ours exits meanwhile (workers
 * and redis-server outlive it), so the growth is its figure.
 */
async function measuredGenerate(args: readonly string[]): Promise<GenerateMeasure> {
  const ownChildTicks = () => processes().get(process.pid)?.childTicks ?? 0;
  const before = ownChildTicks();
  const started = performance.now();
  const driver = track(startCli(['generate', '--progress', 'none', ...args]));
  const pid = driver.child.pid!;
  let ownTicks = 0;
  let peakRssBytes = 0;
  const poll = setInterval(() => {
    ownTicks = processes().get(pid)?.ticks ?? ownTicks;
    peakRssBytes = Math.max(peakRssBytes, peakRss(pid) ?? 0);
  }, POLL_MS);
  const code = await driver.exited;
  clearInterval(poll);
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`generate exited with ${code}:\n${tail(driver.stderr())}`);
  return {
    wallMs,
    cpuS: (ownChildTicks() - before) / TICKS_PER_SECOND,
    ownCpuS: ownTicks / TICKS_PER_SECOND,
    peakRssBytes,
  };
}

// ---------------------------------------------------------------- outputs

/** Every output file (not the cache) by path → sha256; stats.json without its timing. */
function outputHashes(dir: string): Map<string, string> {
  const hashes = new Map<string, string>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const file = path.join(rel, entry.name);
      if (entry.isDirectory()) {
        if (file !== '.cache') walk(file);
        continue;
      }
      let bytes: Buffer | string = readFileSync(path.join(dir, file));
      if (file === 'stats.json') {
        const stats = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
        delete stats.timing;
        bytes = JSON.stringify(stats);
      }
      hashes.set(file, createHash('sha256').update(bytes).digest('hex'));
    }
  };
  walk('');
  return hashes;
}

interface Comparison {
  files: number;
  identical: boolean;
  /** Paths that differ, are missing or are extra (the first few). */
  differing: string[];
}

function compareOutputs(dir: string, reference: ReadonlyMap<string, string>): Comparison {
  const mine = outputHashes(dir);
  const differing = [...new Set([...reference.keys(), ...mine.keys()])]
    .filter((file) => reference.get(file) !== mine.get(file))
    .sort();
  return { files: mine.size, identical: differing.length === 0, differing: differing.slice(0, 10) };
}

// ---------------------------------------------------------------- Redis

async function info(redis: Redis, section: string): Promise<Record<string, string>> {
  const text = await redis.info(section);
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((line) => line.includes(':') && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  );
}

async function scanKeys(redis: Redis, match: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 2000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** The run spec's string keys: the head (`spec`) and the per-database chunks (`db:<id>`); a spec of one piece has no chunks. */
async function specSizes(redis: Redis, runId: string) {
  const base = `${PREFIX}:runs:${runId}:`;
  const head = await redis.strlen(`${base}spec`);
  const chunkKeys = await scanKeys(redis, `${base}db:*`);
  const pipeline = redis.pipeline();
  for (const key of chunkKeys) pipeline.strlen(key);
  const sizes = ((await pipeline.exec()) ?? []).map(([, n]) => Number(n));
  return {
    headBytes: head,
    chunks: sizes.length,
    chunkBytes: sizes.reduce((a, b) => a + b, 0),
    largestChunkBytes: Math.max(0, ...sizes),
  };
}

/** Per queue: jobs of the run and the largest `data` field of a job hash (the payload a worker reads with the job). */
async function payloadSizes(
  redis: Redis,
  runId: string,
): Promise<Record<string, { jobs: number; largestDataBytes: number }>> {
  const result: Record<string, { jobs: number; largestDataBytes: number }> = {};
  for (const queue of new Set(Object.values(STAGE_QUEUES))) {
    // Job hashes are `<prefix>:<queue>:<job id>`; a job's other keys (`…:<id>:lock`, `…:dependencies`) have one more part.
    const keys = (await scanKeys(redis, `${PREFIX}:${queue}:${runId}.*`)).filter(
      (key) => !key.slice(`${PREFIX}:${queue}:`.length).includes(':'),
    );
    let largest = 0;
    for (let i = 0; i < keys.length; i += 1000) {
      const pipeline = redis.pipeline();
      for (const key of keys.slice(i, i + 1000)) pipeline.hstrlen(key, 'data');
      for (const [, n] of (await pipeline.exec()) ?? []) largest = Math.max(largest, Number(n));
    }
    if (keys.length) result[queue] = { jobs: keys.length, largestDataBytes: largest };
  }
  return result;
}

// ---------------------------------------------------------------- runs

interface QueueRun {
  workers: number;
  wallMs: number;
  identical: boolean;
  comparison: Comparison;
  cpu: {
    driverS: number;
    driverOwnS: number;
    workersOwnS: number[];
    workersSqlS: number[];
    redisS: number;
    /** Machine-wide busy share over the run (1 = both cores busy, others' work included). */
    machineBusy: number;
    /** Our processes' CPU over the wall, in cores. */
    oursCores: number;
  };
  memory: {
    redisPeakBytes: number;
    redisEndBytes: number;
    redisKeys: number;
    /** Bytes Redis sent to its clients over the run (what everyone read). */
    redisNetOutputBytes: number;
    driverPeakRssBytes: number;
    workersPeakRssBytes: number[];
    /** Per worker: the largest V8 heap left after a full collection (what it held live), MB. */
    workersLiveHeapMb: number[];
  };
  spec: Awaited<ReturnType<typeof specSizes>>;
  payloads: Awaited<ReturnType<typeof payloadSizes>>;
}

async function queueRun(
  source: string,
  workerCount: number,
  root: string,
  reference: ReadonlyMap<string, string>,
): Promise<QueueRun> {
  const out = path.join(root, `queue-${workerCount}w`);
  const runId = `scale-${workerCount}w`;
  let server: RedisProcess | undefined;
  let redis: Redis | undefined;
  const workers: CliProcess[] = [];
  try {
    server = await startRedisServer({ persistence: false });
    redis = redisConnection(server.url);
    const redisPid = Number((await info(redis, 'server')).process_id);
    for (let i = 0; i < workerCount; i++) workers.push(await readyWorker(server.url));
    const workerPids = workers.map((w) => w.child.pid!);
    const before = processes();
    const machineBefore = machineCpu();
    const generate = await measuredGenerate([
      ...generateArgs(source, out),
      '--queue',
      server.url,
      '--queue-prefix',
      PREFIX,
      '--no-local-workers',
      '--run',
      runId,
    ]);
    const after = processes();
    const machineAfter = machineCpu();
    const workerCpu = workerPids.map((pid) => treeCpuBetween(pid, before, after));
    const redisS = ((after.get(redisPid)?.ticks ?? 0) - (before.get(redisPid)?.ticks ?? 0)) / TICKS_PER_SECOND;
    const memory = await info(redis, 'memory');
    const stats = await info(redis, 'stats');
    const keyspace = await info(redis, 'keyspace');
    const ours = generate.cpuS + workerCpu.reduce((sum, c) => sum + c.own + c.children, 0) + redisS;
    const comparison = compareOutputs(out, reference);
    const run: QueueRun = {
      workers: workerCount,
      wallMs: generate.wallMs,
      identical: comparison.identical,
      comparison,
      cpu: {
        driverS: generate.cpuS,
        driverOwnS: generate.ownCpuS,
        workersOwnS: workerCpu.map((c) => c.own),
        workersSqlS: workerCpu.map((c) => c.children),
        redisS,
        machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
        oursCores: ours / (generate.wallMs / 1000),
      },
      memory: {
        redisPeakBytes: Number(memory.used_memory_peak),
        redisEndBytes: Number(memory.used_memory),
        redisKeys: Number(/keys=(\d+)/.exec(keyspace.db0 ?? '')?.[1] ?? 0),
        redisNetOutputBytes: Number(stats.total_net_output_bytes),
        driverPeakRssBytes: generate.peakRssBytes,
        workersPeakRssBytes: workerPids.map((pid) => peakRss(pid) ?? 0),
        workersLiveHeapMb: workers.map((w, i) => liveHeapMb(w.stdout(), workerPids[i])),
      },
      spec: await specSizes(redis, runId),
      payloads: await payloadSizes(redis, runId),
    };
    return run;
  } finally {
    await stopWorkers(workers);
    if (redis) await closeConnection(redis).catch(() => {});
    await server?.stop().catch(() => {});
    rmSync(out, { recursive: true, force: true });
  }
}

function linesOf(run: QueueRun): string[] {
  const { cpu, memory, spec, payloads } = run;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const largestPayload = Object.entries(payloads).sort((a, b) => b[1].largestDataBytes - a[1].largestDataBytes)[0];
  return [
    `  ${run.workers} worker${run.workers === 1 ? '' : 's'}: wall ${secs(run.wallMs)}; output ${run.identical ? 'byte-identical' : `DIFFERS (${run.comparison.differing.join(', ')})`} (${run.comparison.files} files)`,
    `    CPU: driver ${cpu.driverS.toFixed(1)} s (own ${cpu.driverOwnS.toFixed(1)}), workers ${sum(cpu.workersOwnS).toFixed(1)} s [${cpu.workersOwnS.map((s) => s.toFixed(1)).join(', ')}], their SQL processes ${sum(cpu.workersSqlS).toFixed(1)} s [${cpu.workersSqlS.map((s) => s.toFixed(1)).join(', ')}], redis-server ${cpu.redisS.toFixed(1)} s; ours ${cpu.oursCores.toFixed(2)} cores of the wall, machine ${(cpu.machineBusy * 100).toFixed(0)} % busy`,
    `    Redis: peak ${mb(memory.redisPeakBytes)}, end ${mb(memory.redisEndBytes)} (${memory.redisKeys} keys), sent ${mb(memory.redisNetOutputBytes)} to clients`,
    `    spec: head ${kb(spec.headBytes)}, ${spec.chunks} chunks ${mb(spec.chunkBytes)} (largest ${kb(spec.largestChunkBytes)}); largest job payload ${largestPayload ? `${largestPayload[1].largestDataBytes} B (${largestPayload[0]})` : 'none'}; jobs ${Object.entries(
      payloads,
    )
      .map(([queue, p]) => `${queue} ${p.jobs}`)
      .join(', ')}`,
    `    peak RSS: driver ${mb(memory.driverPeakRssBytes)}, workers ${memory.workersPeakRssBytes.map(mb).join(', ')}; workers' largest heap after a full GC ${memory.workersLiveHeapMb.map((m) => `${m.toFixed(0)} MB`).join(', ')}`,
  ];
}

export async function queueScaleBench(source: string, workerCounts: readonly number[], referenceDir?: string) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'nl2api-queue-scale-'));
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    process.stderr.write(`${line}\n`);
  };
  try {
    say(`queue at scale: ${source}, ${FORMULATIONS} (template), cold runs; ${os.cpus().length} cores`);
    let reference: GenerateMeasure | undefined;
    const referenceOut = referenceDir ?? path.join(root, 'in-process');
    if (!referenceDir) {
      reference = await measuredGenerate(generateArgs(source, referenceOut));
      say(
        `  in process: wall ${secs(reference.wallMs)}, CPU ${reference.cpuS.toFixed(1)} s (main ${reference.ownCpuS.toFixed(1)}, SQL processes ${(reference.cpuS - reference.ownCpuS).toFixed(1)}), peak RSS ${mb(reference.peakRssBytes)}`,
      );
    }
    const referenceHashes = outputHashes(referenceOut);
    const runs: QueueRun[] = [];
    for (const n of workerCounts) {
      const run = await queueRun(source, n, root, referenceHashes);
      runs.push(run);
      linesOf(run).forEach(say);
    }
    return { report: { source, formulations: FORMULATIONS, reference, runs }, lines };
  } finally {
    await killAll();
    rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const root = packageRoot();
  let source = process.argv[2] && path.resolve(process.argv[2]);
  if (!source) {
    const birdDir = path.resolve(root, process.env.NL2API_BIRD_DIR ?? '../shared/bird-dev');
    if (!existsSync(birdDir))
      throw new Error(`BIRD directory ${birdDir} not found (pass a source, or set NL2API_BIRD_DIR)`);
    source = await clonedCorpus(birdDir, defaultScaleDir(), Number(process.env.NL2API_SCALE_COPIES ?? 10));
  }
  const workerCounts = (process.env.NL2API_SCALE_WORKERS ?? '2,1,4').split(',').map(Number);
  const stop = () => void killAll().then(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { report, lines } = await queueScaleBench(source, workerCounts, process.env.NL2API_SCALE_REFERENCE);
  process.stdout.write(`${lines.join('\n')}\n`);
  const reportFile = path.join(root, 'output', 'queue-scale.json');
  await writeFileAtomic(reportFile, jsonText(report));
  process.stdout.write(`report: ${reportFile}\n`);
}

/** The run both sides make: the corpus, every formulation, REST by its template (no LLM). */
function generateArgs(source: string, out: string): string[] {
  return ['--source', source, '--formulations', FORMULATIONS, '--synthesizer', 'template', '--out', out];
}

runIfMain(import.meta.url, 'queue scale', main);
