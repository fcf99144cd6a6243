import type { ToolOutput, Verdict } from '../core/model.js';

/**
 * Execution check: did running the calls produce outputs? Errors are recognized by shape
 * (name, code), not by class, because they may cross a worker-process boundary.
 * `execution:timeout` (SqlTimeoutError), `execution:sql_error` (SqlExecutionError, or a raw
 * SqliteError), `execution:tool_error:<code>` (a tool's own error code, e.g. a ToolError's),
 * `execution:internal` otherwise. Success: `executed`.
 */

export type ExecutionResult = { ok: true; outputs: ToolOutput[] } | { ok: false; error: unknown };

const SQL_ERROR_NAMES = new Set(['SqlExecutionError', 'SqliteError']);

/**
 * Our tools' codes are snake_case words (`unknown_key`). Node's own codes (`ERR_MODULE_NOT_FOUND`,
 * `ENOMEM`) are faults of the run, not verdicts on the calls: categorized as a tool error,
 * a bug would be cached as the item's rejection.
 */
const TOOL_ERROR_CODE = /^[a-z][a-z0-9_]*$/;

function field(error: unknown, key: string): unknown {
  return error !== null && typeof error === 'object' ? (error as Record<string, unknown>)[key] : undefined;
}

function messageOf(error: unknown): string {
  const message = field(error, 'message');
  return typeof message === 'string' ? message : String(error);
}

export function checkExecution(result: ExecutionResult): Verdict {
  if (result.ok) return { ok: true, category: 'executed', message: `${result.outputs.length} outputs` };
  const { error } = result;
  const name = field(error, 'name');
  const code = field(error, 'code');
  const message = messageOf(error);
  if (name === 'SqlTimeoutError') return { ok: false, category: 'execution:timeout', message };
  if (typeof name === 'string' && SQL_ERROR_NAMES.has(name))
    return { ok: false, category: 'execution:sql_error', message };
  if (typeof code === 'string' && TOOL_ERROR_CODE.test(code))
    return { ok: false, category: `execution:tool_error:${code}`, message };
  return {
    ok: false,
    category: 'execution:internal',
    message: typeof name === 'string' ? `${name}: ${message}` : message,
  };
}
