import { isExecutorFault } from '../../runtime/sql/executor.js';
import { lazy } from '../../core/lazy.js';
import { accept, TransientError } from '../../core/outcome.js';
import type { ExecuteInput, ExecutionRecord } from '../runner/flow.js';
import { sequenceDef } from '../formulations.js';
import type { ItemStage } from '../stage.js';
import { dbCacheKey } from './db-key.js';

const executionCheck = lazy(() => import('../../verifiers/execution.js'));

/**
 * execute: runs a sequence against the live tools, the way its formulation does (formulations.ts). A failure of the calls
 * (SQL error, timeout, tool error) is not a rejection here but data: the verify stage's
 * execution check categorizes it, next to the format check's verdict. Errors the execution
 * check cannot attribute to the calls (`execution:internal`: a bug, not the item) are
 * thrown, so the runner reports them as internal_error and does not cache them; so are
 * failures of the SQL executor itself (a lost worker is retried, a closed pool is not).
 */
export const executeStage: ItemStage<ExecuteInput, ExecutionRecord> = {
  kind: 'item',
  name: 'execute',
  version: 1,
  cacheKey: (input, ctx) => ({
    formulation: input.formulation,
    sequence: input.sequence,
    db: dbCacheKey(ctx.db),
    pool: ctx.config.pool,
    timeoutMs: ctx.config.executeTimeoutMs,
  }),
  async run(input, ctx) {
    const options = { timeoutMs: ctx.config.executeTimeoutMs, pool: ctx.config.pool };
    try {
      const outputs = await sequenceDef(input.formulation).execute(input.sequence, ctx.db, ctx.executor, options);
      return accept({ ok: true, outputs });
    } catch (error) {
      if (error instanceof TransientError || isExecutorFault(error)) throw error;
      const verdict = (await executionCheck()).checkExecution({ ok: false, error });
      if (verdict.category === 'execution:internal') throw error;
      return accept({ ok: false, error: plainError(error) });
    }
  },
};

function plainError(error: unknown): { name: string; message: string; code?: string } {
  const e = error as { name?: unknown; message?: unknown; code?: unknown };
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: typeof e?.message === 'string' ? e.message : String(error),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
  };
}
