import type { PoolMessage, WorkerMessage } from './protocol.js';
import { DatabaseViewError } from './executor.js';
import { ConnectionCache, executeReadOnly, messageOf } from './readonly.js';
import { buildVariantTable } from './variant-table.js';
import { endWithParent } from './parent-death.js';

/**
 * A pool worker process (forked by pool.ts): runs one job at a time, synchronously, so
 * that the pool can stop a runaway statement by killing the process. It runs in a process
 * group of its own, so no terminal signal stops it: it must end with the pool by itself.
 */

const connections = new ConnectionCache();

/** One getrusage call (~1 µs): cheap enough for every reply, unlike the pool reading /proc per statement. */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

type Unstamped = WorkerMessage extends infer M ? (M extends WorkerMessage ? Omit<M, 'cpu'> : never) : never;

/**
 * Messages in the order they came, jobs the pool sent ahead among them (pool.ts, lookahead).
 * The next one waits until the last answer has been written out: an answer too big for the
 * pipe left half-sent while a long statement runs would reach the pool late, and the pool
 * would charge that statement's time to the job it believes is still running.
 */
const inbox: PoolMessage[] = [];
let answering = false;

function send(message: Unstamped): void {
  answering = true;
  const sent = process.send?.({ ...message, cpu: cpuMicros() }, undefined, undefined, () => {
    answering = false;
    work();
  });
  if (sent === undefined) answering = false;
}

function work(): void {
  while (!answering && inbox.length > 0) handle(inbox.shift()!);
}

function handle(message: PoolMessage): void {
  if ('forget' in message) {
    connections.forget(message.forget);
    return;
  }
  const started = performance.now();
  try {
    const { task } = message;
    const result =
      task.kind === 'query'
        ? executeReadOnly(connections.get(task.dbPath, task.view), task.sql, task.params)
        : buildVariantTable(task.request);
    send({ type: 'result', id: message.id, result, ms: performance.now() - started });
  } catch (error) {
    const fault = error instanceof DatabaseViewError ? ('view' as const) : undefined;
    send({ type: 'error', id: message.id, message: messageOf(error), fault, ms: performance.now() - started });
  }
}

process.on('message', (message: PoolMessage) => {
  inbox.push(message);
  work();
});

// The pool went away (closed or died): nothing left to serve.
process.on('disconnect', () => {
  connections.closeAll();
  process.exit(0);
});

// 'disconnect' waits for the statement running, which may be a runaway one that only the pool
// (now gone) would have stopped (parent-death.ts).
endWithParent(1000);

// The databases to open before saying ready (pool.ts, `warm`): a file that fails here fails its statements later, with the reason.
for (const dbPath of process.argv[2] ? (JSON.parse(process.argv[2]) as string[]) : []) {
  try {
    connections.get(dbPath).prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();
  } catch {
    // Reported by the statements that use it.
  }
}

send({ type: 'ready' });
