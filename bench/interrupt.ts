import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startCli } from './queue-harness.js';

/**
 * Ctrl-C as a terminal sends it, for the interrupt test (test/cli/interrupt.test.ts) and the
 * interrupt benchmark (bench/interrupt-bench.ts): the built CLI runs as a foreground job, in a
 * process group of its own, and SIGINT goes to the whole group. After an interrupt and a
 * rerun, the outputs must be byte for byte those of an uninterrupted run.
 */

/** When to press Ctrl-C: after the n-th progress line (`--progress log`), or after a delay; `presses: 2` quits at once. */
export type InterruptPoint = ({ progressLines: number } | { afterMs: number }) & { presses?: 1 | 2 };

export interface InterruptedRun {
  /** Exit code (130: interrupted; null: killed by the signal before the CLI handled it). */
  code: number | null;
  /** false: the run ended before the point was reached. */
  interrupted: boolean;
  stderr: string;
}

const POLL_MS = 20;

/** `nl2api <args>` in `cwd`, with Ctrl-C at `point`; resolves when the CLI has exited. */
export async function runInterrupted(
  args: readonly string[],
  cwd: string,
  point: InterruptPoint,
): Promise<InterruptedRun> {
  const cli = startCli(args, {}, { cwd, detached: true });
  let ended = false;
  const exited = cli.exited.finally(() => (ended = true));
  const reached = async () => {
    if ('afterMs' in point) return sleep(point.afterMs);
    while (!ended && progressLines(cli.stderr()) < point.progressLines) await sleep(POLL_MS);
  };
  await Promise.race([reached(), exited]);
  let interrupted = false;
  for (let press = 0; press < (point.presses ?? 1) && !ended; press++) {
    interrupted = pressCtrlC(cli.child.pid!) || interrupted;
    await sleep(POLL_MS);
  }
  return { code: await exited, interrupted, stderr: cli.stderr() };
}

/** SIGINT to the process group led by `pid`; false if it is gone already. */
function pressCtrlC(pid: number): boolean {
  try {
    process.kill(-pid, 'SIGINT');
    return true;
  } catch {
    return false;
  }
}

/** Progress lines printed so far (`--progress log`). */
export const progressLines = (stderr: string) => stderr.match(/^progress/gm)?.length ?? 0;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The outputs of a run by relative path: every file but the run store's, less what differs
 * between any two cold runs by design: stats.json's `timing`, and the reference times (the
 * moments gold SQL that reads the clock ran) in README.md and manifest.json, with the hash
 * the manifest gives README.md (README.md itself is compared without its times).
 */
export function outputsOf(outDir: string): Map<string, string> {
  const outputs = new Map<string, string>();
  for (const entry of readdirSync(outDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.relative(outDir, path.join(entry.parentPath, entry.name));
    if (file.split(path.sep)[0] === '.cache') continue;
    const text = readFileSync(path.join(outDir, file), 'utf8');
    outputs.set(file, MASKS[file]?.(text) ?? text);
  }
  return outputs;
}

const INSTANT = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g;

interface Manifest {
  referenceTimes?: { referenceTime: string }[];
  files?: { path: string; sha256: string }[];
}

const MASKS: Record<string, (text: string) => string> = {
  'stats.json': (text) => masked<{ timing?: unknown }>(text, (stats) => void delete stats.timing),
  'README.md': (text) => text.replace(INSTANT, '<time>'),
  'manifest.json': (text) =>
    masked<Manifest>(text, (manifest) => {
      for (const entry of manifest.referenceTimes ?? []) entry.referenceTime = '<time>';
      for (const entry of manifest.files ?? []) if (entry.path === 'README.md') entry.sha256 = '<README.md>';
    }),
};

function masked<T>(jsonText: string, mask: (value: T) => void): string {
  const value = JSON.parse(jsonText) as T;
  mask(value);
  return JSON.stringify(value, null, 2);
}

/** The files missing from either side or different, sorted. */
export function differingFiles(expected: ReadonlyMap<string, string>, actual: ReadonlyMap<string, string>): string[] {
  const files = new Set([...expected.keys(), ...actual.keys()]);
  return [...files].filter((file) => expected.get(file) !== actual.get(file)).sort();
}
