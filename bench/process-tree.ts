import { spawn, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Measures a command and every process it starts (a pipeline's SQL worker processes), on
 * Linux, from /proc: wall time, CPU time of the whole tree, and peak resident memory of the
 * tree and of the top process. Polled (every `pollMs`), so a process living less than one
 * interval may be missed by the memory figures; the CPU figure does not depend on polling
 * for the processes that were waited for (see `cpuMs`).
 */

export interface TreeMeasure {
  /** The top process's id (names its files: a CPU profile's, say). */
  pid: number | undefined;
  wallMs: number;
  /**
   * CPU (user + system) of the process and its descendants. The larger of: the growth of our
   * own cutime + cstime across the run (the kernel adds a child's time, and the times of the
   * descendants it waited for, when it is reaped: exact, whatever their lifetime), and the sum
   * of the last utime + stime polled per process (which also counts descendants orphaned
   * before they ended, and only those seen).
   */
  cpuMs: number;
  /** The per-process polled sum alone (for comparison with `cpuMs`). */
  polledCpuMs: number;
  /** The top process's own CPU, all its threads, as last polled (up to one interval short). */
  mainCpuMs: number;
  /** Highest sum of VmRSS over the tree at one sample. */
  peakTreeRssMb: number;
  peakMainRssMb: number;
  /** Most processes seen in the tree at once. */
  peakProcesses: number;
  samples: number;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface MeasureOptions extends Pick<SpawnOptions, 'cwd' | 'env'> {
  /** Sampling interval (default 50 ms). */
  pollMs?: number;
  /** Also copy the child's stderr to ours as it comes (progress lines); it is captured either way. */
  echoStderr?: boolean;
}

/** One process as /proc/<pid>/stat shows it. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, clock ticks. */
  ticks: number;
  /** cutime + cstime: the reaped children's ticks. */
  childTicks: number;
}

/** USER_HZ: 100 on every Linux the project targets (sysconf is not reachable from Node). */
const CLOCK_TICKS_PER_SECOND = 100;
const MB = 1024 * 1024;

/**
 * Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may hold spaces
 * and parentheses itself: the fields are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat {
  const pid = Number(text.slice(0, text.indexOf(' ')));
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): ppid is 4, utime 14, stime 15, cutime 16, cstime 17.
  return {
    pid,
    ppid: Number(fields[1]),
    ticks: Number(fields[11]) + Number(fields[12]),
    childTicks: Number(fields[13]) + Number(fields[14]),
  };
}

/** VmRSS in bytes from /proc/<pid>/status text (0 for a zombie, which has none). */
export function parseVmRss(status: string): number {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

function readOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined; // the process ended meanwhile
  }
}

/**
 * Every live process's parent, from one pass over /proc (the kernel here has no
 * /proc/<pid>/task/<tid>/children; a scan of ~200 stat files costs about a millisecond).
 */
function allStats(): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const text = readOrUndefined(`/proc/${name}/stat`);
    if (text) stats.set(Number(name), parseProcStat(text));
  }
  return stats;
}

/** `root` and its descendants among `stats`, root first. */
export function descendants(root: number, stats: ReadonlyMap<number, ProcStat>): number[] {
  const children = new Map<number, number[]>();
  for (const stat of stats.values()) {
    const list = children.get(stat.ppid);
    if (list) list.push(stat.pid);
    else children.set(stat.ppid, [stat.pid]);
  }
  if (!stats.has(root)) return [];
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}

/** Our own cutime + cstime (ticks): grows by a whole subtree's CPU when its top process is reaped. */
function ownChildTicks(): number {
  return parseProcStat(readFileSync('/proc/self/stat', 'utf8')).childTicks;
}

/** Runs `command args` and measures its process tree until it exits. Never rejects for a non-zero exit. */
export async function measureProcessTree(
  command: string,
  args: readonly string[],
  options: MeasureOptions = {},
): Promise<TreeMeasure> {
  const pollMs = options.pollMs ?? 50;
  const childTicksBefore = ownChildTicks();
  const started = performance.now();
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr.push(chunk);
    if (options.echoStderr) process.stderr.write(chunk);
  });

  const lastTicks = new Map<number, number>();
  let peakTree = 0;
  let peakMain = 0;
  let peakProcesses = 0;
  let samples = 0;
  const sample = () => {
    if (child.pid === undefined) return;
    const stats = allStats();
    const tree = descendants(child.pid, stats);
    let treeRss = 0;
    for (const pid of tree) {
      const status = readOrUndefined(`/proc/${pid}/status`);
      if (!status) continue;
      lastTicks.set(pid, stats.get(pid)!.ticks);
      const rss = parseVmRss(status);
      treeRss += rss;
      if (pid === child.pid) peakMain = Math.max(peakMain, rss);
    }
    peakTree = Math.max(peakTree, treeRss);
    peakProcesses = Math.max(peakProcesses, tree.length);
    samples++;
  };
  sample();
  const timer = setInterval(sample, pollMs);

  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.on('error', reject);
      // 'close': the process was reaped (its times are in our cutime) and its output is complete.
      child.on('close', (code, signal) => resolve({ code, signal }));
    },
  ).finally(() => clearInterval(timer));
  const wallMs = performance.now() - started;
  const reapedTicks = ownChildTicks() - childTicksBefore;
  const polledTicks = [...lastTicks.values()].reduce((a, b) => a + b, 0);
  const toMs = (ticks: number) => (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  return {
    pid: child.pid,
    wallMs,
    cpuMs: toMs(Math.max(reapedTicks, polledTicks)),
    polledCpuMs: toMs(polledTicks),
    mainCpuMs: toMs(lastTicks.get(child.pid!) ?? 0),
    peakTreeRssMb: Math.round(peakTree / MB),
    peakMainRssMb: Math.round(peakMain / MB),
    peakProcesses,
    samples,
    exitCode: code,
    signal,
    stdout: Buffer.concat(stdout).toString('utf8'),
    stderr: Buffer.concat(stderr).toString('utf8'),
  };
}
