import type { ResultSet } from '../../core/model.js';
import {
  ExecutorClosedError,
  type SqlExecutor,
  type SqlRequest,
  type VariantTableRequest,
  type VariantTableResult,
} from './executor.js';
import { ConnectionCache, executeReadOnly } from './readonly.js';
import { buildVariantTable } from './variant-table.js';

/**
 * In-process executor: same read-only rules and result shape as the pool, but a runaway
 * statement blocks the event loop (better-sqlite3 cannot interrupt a query), so
 * `timeoutMs` is not enforced. For baselines and tests only.
 */
export function createDirectExecutor(): SqlExecutor {
  const connections = new ConnectionCache();
  let closed = false;
  return {
    async run(request: SqlRequest): Promise<ResultSet> {
      if (closed) throw new ExecutorClosedError('executor closed');
      return executeReadOnly(connections.get(request.dbPath, request.view), request.sql, request.params);
    },
    async buildVariantTable(request: VariantTableRequest): Promise<VariantTableResult> {
      if (closed) throw new ExecutorClosedError('executor closed');
      return buildVariantTable(request);
    },
    forget: (dbPath: string) => connections.forget(dbPath),
    async close(): Promise<void> {
      closed = true;
      connections.closeAll();
    },
  };
}
