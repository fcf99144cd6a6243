import { readFileSync } from 'node:fs';

/**
 * CPU time of a process as Linux reports it in /proc/<pid>/stat (clock ticks; USER_HZ is 100
 * on every architecture Node runs on). Undefined where there is no /proc (not Linux) or the
 * process is gone: callers fall back to wall-clock time.
 */

export const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcCpuTicks {
  /** utime + stime (fields 14–15): the process's own threads. */
  own: number;
  /** cutime + cstime (fields 16–17): its children that ended and were reaped. */
  children: number;
}

/** The CPU ticks of a /proc stat file (`/proc/<pid>/stat`, or a thread's `/proc/<pid>/task/<tid>/stat`). */
export function procCpuTicks(file: string): ProcCpuTicks | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // gone, or not Linux
  }
  // The command name before the fields may hold spaces and parentheses: count from the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  const children = Number(fields[13]) + Number(fields[14]);
  return Number.isFinite(own) && Number.isFinite(children) ? { own, children } : undefined;
}

/** A process's own CPU time in microseconds (the unit of process.cpuUsage()), or undefined. */
export function processCpuMicros(pid: number): number | undefined {
  const ticks = procCpuTicks(`/proc/${pid}/stat`);
  return ticks && (ticks.own * 1e6) / CLOCK_TICKS_PER_SECOND;
}
