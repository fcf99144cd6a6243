import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';

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
   * and at the end; Linux /proc only).
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
  // A process alive at both ends counts its difference; one started in between, all of its time.
  let ticks = 0;
  for (const [id, end] of after) ticks += end - (before.get(id) ?? 0);
  const serverCpuSeconds = ticks / CLOCK_TICKS_PER_SECOND;
  return {
    ...throughput,
    serverCpuSeconds: Math.round(serverCpuSeconds * 100) / 100,
    requestsPerCpuSecond: serverCpuSeconds > 0 ? Math.round(result.requests.total / serverCpuSeconds) : 0,
  };
}

/** USER_HZ: Linux reports CPU times in /proc in hundredths of a second on every architecture it runs Node on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU ticks (user + system) of this process's main thread and of each of `pids` that is alive. */
function serverCpu(pids: readonly number[]): Map<string, number> {
  const ticks = new Map<string, number>();
  const main = cpuTicks(`/proc/${process.pid}/task/${process.pid}/stat`);
  if (main !== undefined) ticks.set('main', main);
  for (const pid of pids) {
    const own = cpuTicks(`/proc/${pid}/stat`);
    if (own !== undefined) ticks.set(String(pid), own);
  }
  return ticks;
}

/** utime + stime of a /proc stat file (fields 14 and 15; the command name before them may hold spaces). */
function cpuTicks(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // gone, or not Linux
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}
