import autocannon from 'autocannon';
import { CLOCK_TICKS_PER_SECOND, procCpuTicks } from '../sql/proc-cpu.js';

/**
 * Load measurement of a served endpoint with a real load generator (autocannon), for
 * `npm run bench`. Loopback only: it is a benchmark of our server, not a load test of
 * anyone else's. autocannon is a dev dependency: only the bench imports this module.
 */

export interface ThroughputOptions {
  connections: number;
  durationSeconds: number;
  /**
   * The server runs in this process: measure its CPU time (this process's main thread, where
   * the load generator does not run, plus these processes: its SQL workers, asked at the start
   * and at the end, plus the children of this process that ended in between — workers killed
   * at a budget or a timeout; Linux /proc only). Nothing else may end as a child of this process
   * during the run (a busy-loop child is stopped after the last measurement).
   */
  serverProcesses?: () => number[];
}

export interface Throughput {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Failed requests: connection errors, timeouts and non-2xx responses. */
  errors: number;
  /** With `serverProcesses`: the server's CPU seconds over the run, and completed requests per CPU second. */
  serverCpuSeconds?: number;
  requestsPerCpuSecond?: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export async function measureThroughput(url: string, path: string, options: ThroughputOptions): Promise<Throughput> {
  const target = new URL(path, url);
  if (!LOOPBACK.has(target.hostname))
    throw new Error(`measureThroughput targets loopback only, not ${target.hostname}`);
  if (!Number.isInteger(options.connections) || options.connections < 1)
    throw new Error('connections must be a positive integer');
  if (!(options.durationSeconds > 0 && options.durationSeconds <= 600))
    throw new Error('durationSeconds must be in (0, 600]');
  const processes = options.serverProcesses;
  const before = processes && serverCpu(processes());
  const result = await autocannon({
    url: target.href,
    method: 'GET',
    connections: options.connections,
    duration: options.durationSeconds,
    // The load generator in a thread of its own: the main thread's CPU time is the server's.
    ...(processes ? { workers: 1 } : {}),
  });
  const throughput: Throughput = {
    requestsPerSecond: result.duration > 0 ? Math.round(result.requests.total / result.duration) : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
  if (!before || !processes) return throughput;
  const after = serverCpu(processes());
  // A process alive at both ends counts its difference; one started in between, all of its time;
  // one that ended in between is in the ended children's total now, all of its time: less what
  // it had at the start.
  let ticks = 0;
  for (const [id, end] of after) ticks += end - (before.get(id) ?? 0);
  for (const [id, start] of before) if (!after.has(id)) ticks -= start;
  const serverCpuSeconds = ticks / CLOCK_TICKS_PER_SECOND;
  return {
    ...throughput,
    serverCpuSeconds: Math.round(serverCpuSeconds * 100) / 100,
    requestsPerCpuSecond: serverCpuSeconds > 0 ? Math.round(result.requests.total / serverCpuSeconds) : 0,
  };
}

/**
 * CPU ticks (user + system) of this process's main thread, of its children that ended and were
 * reaped (cutime + cstime: a worker killed during the run is no longer in `pids`), and of
 * each of `pids` that is alive.
 */
function serverCpu(pids: readonly number[]): Map<string, number> {
  const ticks = new Map<string, number>();
  const main = procCpuTicks(`/proc/${process.pid}/task/${process.pid}/stat`);
  if (main !== undefined) ticks.set('main', main.own);
  const ended = procCpuTicks(`/proc/${process.pid}/stat`);
  if (ended !== undefined) ticks.set('ended children', ended.children);
  for (const pid of pids) {
    const own = procCpuTicks(`/proc/${pid}/stat`);
    if (own !== undefined) ticks.set(String(pid), own.own);
  }
  return ticks;
}
