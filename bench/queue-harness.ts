import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../core/package-root.js';
import { closeConnection, redisConnection } from '../pipeline/queue/connection.js';
import { RunRegistry, type StageProgress } from '../pipeline/queue/registry.js';

/**
 * Processes of a queue deployment, for the benchmark and the fault tests: the built CLI as a
 * driver (`generate --queue`) and as workers, each a real process that can be killed.
 */

const CLI = () => path.join(packageRoot(), 'dist', 'cli', 'main.js');

export interface CliProcess {
  child: ChildProcess;
  /** Exit code (null: killed by a signal). */
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

/** `detached`: in a process group of its own, as a terminal runs a foreground job (bench/interrupt.ts). */
export function startCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: { cwd?: string; detached?: boolean } = {},
): CliProcess {
  const child = spawn(process.execPath, [CLI(), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => out, stderr: () => err };
}

/** Runs the CLI to its end. */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const process_ = startCli(args, env);
  const code = await process_.exited;
  return { code, stdout: process_.stdout(), stderr: process_.stderr() };
}

export interface WorkerSpec {
  url: string;
  prefix: string;
  concurrency?: number;
  lockDurationMs?: number;
  stages?: string;
  env?: NodeJS.ProcessEnv;
}

export function startWorker(spec: WorkerSpec): CliProcess {
  const args = [
    'worker',
    '--queue',
    spec.url,
    '--queue-prefix',
    spec.prefix,
    '--concurrency',
    String(spec.concurrency ?? 2),
    '--lock-duration',
    String(spec.lockDurationMs ?? 2000),
    '--grace',
    '10',
  ];
  if (spec.stages) args.push('--stages', spec.stages);
  return startCli(args, spec.env);
}

/** Resolves once `ready(progress)` holds for the run (polled), or rejects after `timeoutMs`. */
export async function waitForProgress(
  url: string,
  prefix: string,
  runId: string,
  ready: (progress: StageProgress[]) => boolean,
  timeoutMs = 60_000,
): Promise<StageProgress[]> {
  const redis = redisConnection(url);
  const registry = new RunRegistry(redis, prefix);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const progress = await registry.progress(runId).catch(() => []);
      if (ready(progress)) return progress;
      if (Date.now() > deadline)
        throw new Error(
          `run ${runId}: progress condition not met within ${timeoutMs} ms (${JSON.stringify(progress)})`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await closeConnection(redis);
  }
}

/** Jobs done in a stage group so far. */
export const doneIn = (progress: readonly StageProgress[], group: string): number =>
  progress.find((p) => p.group === group)?.done ?? 0;
