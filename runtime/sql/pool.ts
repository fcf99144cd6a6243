import { fork, spawn as spawnProcess, type ChildProcess, type StdioOptions } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';
import type { ResultSet } from '../../core/model.js';
import { siblingModule } from '../../core/sibling-module.js';
import {
  DatabaseViewError,
  ExecutorClosedError,
  SqlExecutionError,
  SqlTimeoutError,
  SqlWorkerError,
  type SqlExecutor,
  type SqlRequest,
  type TimedResult,
  type VariantTableRequest,
  type VariantTableResult,
} from './executor.js';
import type { PoolMessage, WorkerJob, WorkerMessage, WorkerTask } from './protocol.js';
import { processCpuMicros } from './proc-cpu.js';
import { deathSignalPrefix } from './parent-death.js';

/**
 * The pipeline's SQL executor: a pool of child processes (worker.ts), each running one
 * statement at a time. better-sqlite3 cannot interrupt a query, so a timeout SIGKILLs
 * the worker running it (and a fresh one is started on demand): the statement really stops.
 * Workers start lazily, when a request finds no idle worker and the pool is not full.
 *
 * Only SQLite's refusal (SqlExecutionError) and our timeout (SqlTimeoutError) speak about the
 * statement; a worker lost otherwise is a SqlWorkerError, a closed pool an ExecutorClosedError.
 */

export interface SqlPoolOptions {
  /** Maximum number of statements running at once, one per worker process. */
  size: number;
  /**
   * Workers kept started and idle beyond those running (default 0), once the pool has been
   * used: a worker killed at a timeout is replaced at once by a ready one, so the next
   * request does not wait for a process to start (a server's fast requests after a runaway).
   */
  spare?: number;
  /**
   * Scheduling niceness of the workers (default 0, the parent's): a positive value lets the
   * CPU go first to whatever runs at normal priority (a server's event loop, a faster lane).
   */
  nice?: number;
  /**
   * Database files each worker opens (and reads the schema of) as it starts: its first
   * statement, perhaps right after a kill, then costs what any other does.
   */
  warm?: readonly string[];
  /**
   * Reads a worker's CPU time (µs, the unit of process.cpuUsage()) when a CPU budget's timer
   * fires; default /proc/<pid>/stat. Undefined (no /proc): the budget is wall-clock time.
   * Tests inject one to script "waited for the CPU" and "ran away" without depending on speed.
   */
  cpuOf?: (pid: number) => number | undefined;
  /**
   * Jobs sent to a busy worker ahead of the one it runs (default 0), for batch work: the
   * worker starts the next as soon as its answer has left, instead of sleeping until the
   * parent, busy with other items, reads that answer and sends more. Waking an idle worker
   * costs both processes more CPU than the message itself (~0.1 ms a round trip on a
   * 2-core VM). A job sent ahead waits behind that worker's current one even if another
   * worker falls idle, which a server's tail latency would feel: servers keep 0. Only a worker
   * whose statement has just started is sent one (AHEAD_WITHIN_MS).
   */
  lookahead?: number;
}

/**
 * A statement's CPU budget (the laned executor's fast lane, lanes.ts): it may use `cpuMs` of
 * CPU. Past it, `overrun()` decides: true, its worker is killed and the run fails with
 * SqlOverBudgetError; false, it runs on, to its answer or its timeout.
 */
export interface CpuBudget {
  cpuMs: number;
  overrun(): boolean;
}

/** A run stopped at its CPU budget (not at its timeout): the laned executor runs it again in the slow lane. */
export class SqlOverBudgetError extends SqlTimeoutError {
  override name = 'SqlOverBudgetError';
}

export interface SqlPool extends SqlExecutor {
  /** Process ids of the live workers (diagnostics and tests). */
  workerPids(): number[];
  /** SqlExecutor.forget: every worker closes the database's connections. */
  forget(dbPath: string): void;
  /**
   * `run`, with the statement's running time and CPU time (the laned executor measures cost
   * with them, lanes.ts; gold times itself with it), within `budget` if given.
   */
  runTimed(request: SqlRequest, budget?: CpuBudget): Promise<TimedResult>;
  /** Workers killed so far, at a timeout or a CPU budget (each replaced by a fresh process). */
  workerRecycles(): number;
}

interface Job {
  id: number;
  task: WorkerTask;
  timeoutMs: number;
  budget?: CpuBudget;
  /** When its worker started it, as far as the pool can tell (performance.now()). */
  startedAt: number;
  /** The worker's CPU time (µs) when it started the job: what it had reported last. */
  startCpu: number;
  /** `cpuMs` NaN where the worker does not report its CPU. */
  resolve(result: unknown, runMs: number, cpuMs: number): void;
  reject(error: Error): void;
}

interface Worker {
  child: ChildProcess;
  ready: boolean;
  /** The job it runs first, then those sent ahead (`lookahead`), in the order it runs them. */
  jobs: Job[];
  timer: NodeJS.Timeout | null;
  /** The worker's CPU time (µs) in its last message. */
  cpu: number;
  /** Tail of the worker's stderr: the reason when it fails to start. */
  stderr: string;
}

/**
 * A worker's heap holds one statement's rows at a time, but allocates them fast: with V8's
 * defaults its young generation and its old one's growth made a worker settle at ~130 MB
 * (half of it heap slack); the main process's settings (the bin's shebang, cli/heap.ts) keep it
 * near 100 MB. A 2 MB young generation saved a little more but cost 6 % more CPU at x50.
 */
const WORKER_HEAP = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

/**
 * The module a worker runs: worker.ts's sibling (built, or through tsx from the sources), or
 * the plain-JS module named by NL2API_SQL_WORKER_MODULE. The test suite names one, bundled
 * from the sources once per run (test/support/global-setup.js): tsx's loader cost each
 * worker it forked ~0.3 CPU-s and ~0.4 s of start-up, and the suite forks some 250.
 */
function workerModule(): { path: string; execArgv: string[] } {
  const prebuilt = process.env.NL2API_SQL_WORKER_MODULE;
  return prebuilt ? { path: prebuilt, execArgv: [] } : siblingModule(import.meta.url, 'worker');
}

/**
 * `npm run profile` (bench/profile.ts) profiles the workers too: node does not take
 * --cpu-prof from NODE_OPTIONS, so the pool passes it on when NL2API_CPU_PROF_DIR names a folder.
 */
function profilerArgs(): string[] {
  const dir = process.env.NL2API_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/**
 * A job is sent ahead only to a worker whose statement started less than this long ago. One
 * that has run longer may run for seconds (large databases), and the job behind it would
 * wait all that time while another worker frees up; BIRD dev's statements take ~1 ms.
 */
const AHEAD_WITHIN_MS = 10;

/** setTimeout fires at once for delays past 2^31-1 ms: treat those as "no timeout". */
const MAX_TIMER_MS = 2 ** 31 - 1;
const STDERR_TAIL = 2000;

export function createSqlPool(options: SqlPoolOptions): SqlPool {
  if (!Number.isInteger(options.size) || options.size < 1) {
    throw new Error(`SQL pool size must be a positive integer, got ${options.size}`);
  }
  const size = options.size;
  const spare = options.spare ?? 0;
  const workers: Worker[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;
  /** Workers that died before becoming ready since the last one that did. */
  let failedStarts = 0;
  let recycles = 0;
  const cpuOf = options.cpuOf ?? processCpuMicros;
  const lookahead = options.lookahead ?? 0;

  function spawn(): void {
    const { path: workerPath, execArgv } = workerModule();
    const nodeArgs = [...execArgv, ...WORKER_HEAP, ...profilerArgs()];
    const args = options.warm?.length ? [JSON.stringify(options.warm)] : [];
    const common = {
      serialization: 'advanced' as const,
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'] as StdioOptions,
      // A process group of its own: the terminal's Ctrl-C (SIGINT to the foreground group)
      // reaches the parent, which finishes the items in flight, and not the workers running
      // them. The worker still ends with the parent, however it dies (parent-death.ts).
      detached: true,
    };
    const guard = deathSignalPrefix();
    const child = guard
      ? spawnProcess(guard.command, [...guard.args, process.execPath, ...nodeArgs, workerPath, ...args], {
          ...common,
          env: { ...process.env, ...guard.env },
        })
      : fork(workerPath, args, { ...common, execArgv: nodeArgs });
    const worker: Worker = { child, ready: false, jobs: [], timer: null, cpu: 0, stderr: '' };
    if (options.nice && child.pid !== undefined) lowerPriority(child.pid, options.nice);
    workers.push(worker);
    // Only the process handle (ref'd while starting or busy) may keep the parent alive.
    (child.stderr as Socket | null)?.unref();
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      worker.stderr = (worker.stderr + chunk).slice(-STDERR_TAIL);
    });
    child.on('message', (message: WorkerMessage) => onMessage(worker, message));
    // 'close' (not 'exit'): stderr is complete by then, for the failed-start message.
    child.on('close', (code, signal) => onExit(worker, `exit code ${code}, signal ${signal}`));
    child.on('error', (error) => {
      onExit(worker, error.message);
      child.kill('SIGKILL');
    });
  }

  function onMessage(worker: Worker, message: WorkerMessage): void {
    // A retired worker (being stopped, or killed at a timeout) may still deliver what it sent
    // before: a late 'ready' must not mark it idle, whose unref would undo stop()'s ref and let
    // the loop end before its exit (a CLI then left `await main()` unsettled: exit code 13).
    if (!workers.includes(worker)) return;
    // A worker module that does not report its CPU (NL2API_SQL_WORKER_MODULE, an older build): NaN, unknown.
    worker.cpu = typeof message.cpu === 'number' ? message.cpu : NaN;
    if (message.type === 'ready') {
      worker.ready = true;
      failedStarts = 0;
      idle(worker);
      dispatch();
      return;
    }
    const job = worker.jobs[0];
    if (!job || job.id !== message.id) return;
    const runMs = message.ms;
    const cpuMs = (worker.cpu - job.startCpu) / 1000;
    finish(worker);
    if (worker.jobs.length > 0) start(worker);
    if (message.type === 'result') job.resolve(message.result, runMs, cpuMs);
    else job.reject(message.fault ? new DatabaseViewError(message.message) : new SqlExecutionError(message.message));
    dispatch();
  }

  /** The worker is gone: a crash or a kill (its job fails, the others don't notice) or a failed start. */
  function onExit(worker: Worker, how: string): void {
    if (!remove(worker)) return; // already retired (timeout or close)
    const job = worker.jobs[0];
    if (job) {
      finish(worker);
      requeue(worker);
      job.reject(new SqlWorkerError(`SQL worker died running the statement (${how})`));
    } else if (!worker.ready && ++failedStarts >= size && !workers.some((other) => other.ready)) {
      // Workers cannot start (a broken install, bad NODE_OPTIONS, ...): fail the waiting
      // requests rather than respawning forever; a later request tries again.
      failedStarts = 0;
      const reason = `SQL worker failed to start (${how})${worker.stderr ? `: ${worker.stderr.trim()}` : ''}`;
      for (const waiting of queue.splice(0)) waiting.reject(new SqlWorkerError(reason));
    }
    dispatch();
  }

  function assign(worker: Worker, job: Job): void {
    worker.jobs.push(job);
    if (worker.jobs.length === 1) start(worker);
    const message: WorkerJob = { id: job.id, task: job.task };
    worker.child.send(message);
  }

  /**
   * The worker's first job starts: sent now, or sent ahead and begun when the answer before it
   * left, a little before that answer reached us (its timeout is that much more lenient; its
   * CPU is exact, counted from the CPU the worker reported with that answer).
   */
  function start(worker: Worker): void {
    const job = worker.jobs[0];
    job.startedAt = performance.now();
    job.startCpu = worker.cpu;
    busy(worker);
    arm(worker, job, job.budget ? job.budget.cpuMs : Infinity);
  }

  /** The jobs sent ahead to a worker that is gone never ran: they go first to whichever worker is next. */
  function requeue(worker: Worker): void {
    queue.unshift(...worker.jobs.splice(0));
  }

  /** The job's next check: its timeout, or sooner (`checkInMs`) a look at its CPU budget. */
  function arm(worker: Worker, job: Job, checkInMs: number): void {
    const timeoutIn = job.timeoutMs - (performance.now() - job.startedAt);
    const budgetCheck = checkInMs < timeoutIn;
    const delay = budgetCheck ? checkInMs : timeoutIn;
    if (!(Number.isFinite(delay) && delay <= MAX_TIMER_MS)) return;
    // The verdict waits for the loop's next poll: after a stall of this process (a busy machine)
    // timers run first, and an answer already in the pipe must count before the timer does.
    const check = budgetCheck ? () => onBudgetCheck(worker, job) : () => onTimeout(worker, job);
    worker.timer = setTimeout(() => setImmediate(check), Math.max(0, delay));
  }

  /**
   * Wall time is the wrong measure of a statement's cost on a busy machine: a cheap statement
   * waiting for a CPU outlasts any wall budget and killing its worker only adds the cost of a
   * new process to the contention. So /proc is read here only, when a budget's time is up (a
   * few ms of it past the start is no news; reading it per statement cost 20-35 % throughput):
   * a statement that has used less CPU than its budget waited for it, and is given the rest of
   * its budget (at least a quarter of it, so that the checks stay few) before the next look.
   */
  function onBudgetCheck(worker: Worker, job: Job): void {
    const budget = job.budget;
    if (worker.jobs[0] !== job || !budget) return;
    worker.timer = null;
    const pid = worker.child.pid;
    const now = pid === undefined ? undefined : cpuOf(pid);
    // No /proc, or no start: the wall time is all there is to go by.
    const usedMs =
      now === undefined || Number.isNaN(job.startCpu) ? performance.now() - job.startedAt : (now - job.startCpu) / 1000;
    if (usedMs < budget.cpuMs) return arm(worker, job, Math.max(budget.cpuMs - usedMs, budget.cpuMs / 4));
    if (budget.overrun())
      return kill(
        worker,
        job,
        new SqlOverBudgetError(`statement used its CPU budget of ${budget.cpuMs} ms and was stopped`),
      );
    // Kept running (no kill allowed now): only its timeout stops it.
    job.budget = undefined;
    arm(worker, job, Infinity);
  }

  function onTimeout(worker: Worker, job: Job): void {
    if (worker.jobs[0] !== job) return;
    const what = job.task.kind === 'query' ? 'statement' : 'variant table build';
    kill(worker, job, new SqlTimeoutError(`${what} exceeded its timeout of ${job.timeoutMs} ms and was stopped`));
  }

  function kill(worker: Worker, job: Job, error: Error): void {
    remove(worker);
    finish(worker);
    requeue(worker);
    worker.child.kill('SIGKILL');
    recycles++;
    job.reject(error);
    dispatch();
  }

  /** The worker's first job is done with (answered, failed or abandoned); the rest stay its own. */
  function finish(worker: Worker): void {
    if (worker.timer) clearTimeout(worker.timer);
    worker.timer = null;
    worker.jobs.shift();
    if (worker.jobs.length === 0) idle(worker);
  }

  function remove(worker: Worker): boolean {
    const at = workers.indexOf(worker);
    if (at < 0) return false;
    workers.splice(at, 1);
    return true;
  }

  function dispatch(): void {
    while (queue.length > 0 && !closed) {
      const running = workers.filter((worker) => worker.jobs.length > 0);
      const free = running.length < size && workers.find((worker) => worker.ready && worker.jobs.length === 0);
      if (free) {
        assign(free, queue.shift()!);
        continue;
      }
      const starting = workers.filter((worker) => !worker.ready).length;
      if (workers.length < size && starting < queue.length) {
        spawn();
        continue;
      }
      const ahead = running.find(
        (worker) => worker.jobs.length <= lookahead && performance.now() - worker.jobs[0].startedAt < AHEAD_WITHIN_MS,
      );
      if (ahead) {
        assign(ahead, queue.shift()!);
        continue;
      }
      break;
    }
    // Spares: started as soon as the pool is in use, and again as each one is taken (not while
    // workers fail to start: that is for a request to find out, once).
    if (failedStarts > 0) return;
    const waiting = workers.filter((worker) => worker.jobs.length === 0).length;
    for (let more = spare - waiting; more > 0 && !closed && workers.length < size + spare; more--) spawn();
  }

  /** The job's answer, its running time and its CPU time. */
  function submit<T>(
    task: WorkerTask,
    timeoutMs: number,
    budget?: CpuBudget,
  ): Promise<{ value: T; runMs: number; cpuMs: number }> {
    if (closed) return Promise.reject(new ExecutorClosedError('executor closed'));
    return new Promise((resolve, reject) => {
      const settle = (value: unknown, runMs: number, cpuMs: number) => resolve({ value: value as T, runMs, cpuMs });
      queue.push({ id: nextId++, task, timeoutMs, budget, startedAt: 0, startCpu: 0, resolve: settle, reject });
      dispatch();
    });
  }

  const runTimed = async (
    { dbPath, sql, params, view, timeoutMs }: SqlRequest,
    budget?: CpuBudget,
  ): Promise<TimedResult> => {
    // A view's `read` names results; a worker opens `overlays`.
    const opened = view && { overlays: view.overlays, reverseScans: view.reverseScans };
    const task: WorkerTask = { kind: 'query', dbPath, sql, params, view: opened };
    const { value, runMs, cpuMs } = await submit<ResultSet>(task, timeoutMs, budget);
    return Number.isNaN(cpuMs) ? { result: value, runMs } : { result: value, runMs, cpuMs };
  };

  return {
    run: async (request: SqlRequest) => (await runTimed(request)).result,

    runTimed,

    workerRecycles: () => recycles,

    buildVariantTable: async (request: VariantTableRequest) =>
      (await submit<VariantTableResult>({ kind: 'variant-table', request }, request.timeoutMs)).value,

    // A worker reads it after the job it is running, if any; one started later never opened the database.
    forget(dbPath: string): void {
      const message: PoolMessage = { forget: dbPath };
      for (const worker of workers) if (worker.child.connected) worker.child.send(message);
    },

    async close(): Promise<void> {
      closed = true;
      const stopped = new ExecutorClosedError('executor closed');
      for (const job of queue.splice(0)) job.reject(stopped);
      const exits = workers.splice(0).map((worker) => {
        const busy = worker.jobs.length > 0;
        if (worker.timer) clearTimeout(worker.timer);
        for (const job of worker.jobs.splice(0)) job.reject(stopped);
        return busy ? stop(worker.child) : release(worker.child);
      });
      await Promise.all(exits);
    },

    workerPids(): number[] {
      return workers.flatMap((worker) => (worker.child.pid === undefined ? [] : [worker.child.pid]));
    },
  };
}

/**
 * An idle worker must not keep the parent process alive (a forgotten close() must not
 * hang it); a busy one must, until its answer arrives.
 */
function idle(worker: Worker): void {
  worker.child.unref();
  worker.child.channel?.unref();
}

function busy(worker: Worker): void {
  worker.child.ref();
  worker.child.channel?.ref();
}

/** Best effort: a system that refuses (a container without the right) leaves the worker at normal priority. */
function lowerPriority(pid: number, nice: number): void {
  try {
    os.setPriority(pid, Math.min(19, os.getPriority(pid) + nice));
  } catch {
    // Only a scheduling preference: the worker runs all the same.
  }
}

/** How long an idle worker has to exit on its own once let go, before it is killed. */
const RELEASE_GRACE_MS = 2000;

/**
 * An idle worker is let go (its channel closed: worker.ts closes its connections and exits),
 * so that it ends as a process normally does (a CPU profile is written then); one that does
 * not exit within the grace is killed.
 */
function release(child: ChildProcess): Promise<void> {
  if (!child.connected) return stop(child);
  return new Promise((resolve) => {
    child.ref();
    const timer = setTimeout(() => void stop(child).then(resolve), RELEASE_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.disconnect();
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.ref(); // an idle worker is unref'd: keep the loop alive until it is gone
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
