import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * A pool worker must end with its parent however the parent dies (kill -9 included), even in
 * the middle of a statement that blocks its event loop and so its 'disconnect' event. Where
 * util-linux's `setpriv` works (Linux), the kernel sees to it: the worker is started through
 * `setpriv --pdeathsig KILL`, which asks for SIGKILL at its parent's death and then becomes the
 * worker (exec keeps the request), at no cost while it runs. Elsewhere, a thread of the worker
 * watches its parent: a second isolate, ~0.1 CPU-s to start and ~10 MB per worker.
 */

/** Set in a worker's environment when the kernel will kill it with its parent. */
const KERNEL_GUARD = 'NL2API_SQL_WORKER_PDEATHSIG';

/** The command that starts a worker the kernel kills with its parent; null where there is none. */
export function deathSignalPrefix(): { command: string; args: string[]; env: Record<string, string> } | null {
  if (prefix === undefined) prefix = findSetpriv();
  return prefix;
}
let prefix: ReturnType<typeof deathSignalPrefix> | undefined;

function findSetpriv(): ReturnType<typeof deathSignalPrefix> {
  if (process.platform !== 'linux') return null;
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const command = dirs.map((dir) => path.join(dir, 'setpriv')).find((file) => existsSync(file));
  if (!command) return null;
  const args = ['--pdeathsig', 'KILL'];
  // A system that forbids it (a seccomp profile, an old util-linux) keeps the thread.
  const trial = spawnSync(command, [...args, 'true'], { stdio: 'ignore', timeout: 10_000 });
  return trial.status === 0 ? { command, args, env: { [KERNEL_GUARD]: '1' } } : null;
}

/** In a worker: unless the kernel kills it with its parent, a thread that does (checking every `intervalMs`). */
export function endWithParent(intervalMs: number): void {
  if (process.env[KERNEL_GUARD] === '1') return;
  // Killed with kill -9, the parent leaves this process to be reparented: its ppid changes.
  const watchdog = `const ppid = ${process.ppid};
    setInterval(() => { if (process.ppid !== ppid) process.kill(process.pid, 'SIGKILL'); }, ${intervalMs});`;
  new Worker(watchdog, { eval: true }).unref();
}
