import type { WorkerJob, WorkerMessage } from './protocol.js';
import { ConnectionCache, executeReadOnly, messageOf } from './readonly.js';

/**
 * A pool worker process (forked by pool.ts): runs one job at a time, synchronously, so
 * that the pool can stop a runaway statement by killing the process.
 */

const connections = new ConnectionCache();

function send(message: WorkerMessage): void {
  process.send?.(message);
}

process.on('message', (job: WorkerJob) => {
  try {
    send({ type: 'result', id: job.id, result: executeReadOnly(connections.get(job.dbPath), job.sql, job.params) });
  } catch (error) {
    send({ type: 'error', id: job.id, message: messageOf(error) });
  }
});

// The pool went away (closed or died): nothing left to serve.
process.on('disconnect', () => {
  connections.closeAll();
  process.exit(0);
});

send({ type: 'ready' });
