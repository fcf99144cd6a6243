import type { ResultSet } from '../../core/model.js';
import type { SqlParam } from './executor.js';

/** Messages between the pool (pool.ts) and its worker processes (worker.ts). */

export interface WorkerJob {
  id: number;
  dbPath: string;
  sql: string;
  params: SqlParam[];
}

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'result'; id: number; result: ResultSet }
  | { type: 'error'; id: number; message: string };
