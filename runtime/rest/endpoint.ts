import { bindPlaceholders } from './bind.js';
import type { ArgumentValue, EndpointSpec } from './spec.js';
import type { DatabaseInfo, ResultSet } from '../../core/model.js';
import type { SqlExecutor } from '../sql/executor.js';
import { checkFinite } from './parameters.js';

/**
 * What one endpoint call runs: its SQL with the arguments bound (never spliced), read-only
 * through the executor with a timeout. The live server answers requests with it, and the
 * verify-and-retry loop runs candidate endpoints with it before they are served, so both
 * see exactly the same rows and failures.
 */
export async function runEndpoint(
  endpoint: EndpointSpec,
  args: Readonly<Record<string, ArgumentValue>>,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<ResultSet> {
  checkFinite(endpoint.parameters, args);
  const bound = bindPlaceholders(endpoint.sql, { ...args }, endpoint.parameters);
  const result = await executor.run({ dbPath: db.path, sql: bound.sql, params: bound.params, timeoutMs });
  return { columns: result.columns, rows: result.rows };
}
