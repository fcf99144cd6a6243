import { bindPlaceholders } from './bind.js';
import type { ArgumentValue, EndpointSpec } from './spec.js';
import type { DatabaseInfo, ResultSet } from '../../core/model.js';
import type { SqlExecutor } from '../sql/executor.js';
import { resultShape } from '../sql/result-shape.js';
import { sortedRows } from '../sql/row-sort.js';
import { checkBindable } from './parameters.js';

/**
 * What one endpoint call runs: its SQL with the arguments bound (never spliced), read-only
 * through the executor with a timeout. The live server answers requests with it, and the
 * verify-and-retry loop runs candidate endpoints with it before they are served, so both
 * see exactly the same rows and failures.
 *
 * An endpoint whose SQL has no top-level ORDER BY serves its rows in one canonical order
 * (row-sort.ts), not in whatever order the query plan gave them: the same call answers the
 * same bytes on any SQLite version, index set or run, and a run of the same query made
 * another way (`sameRowsAs`: the gold SQL it was made from) serves it too.
 */
export async function runEndpoint(
  endpoint: EndpointSpec,
  args: Readonly<Record<string, ArgumentValue>>,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
  sameRowsAs?: string,
): Promise<ResultSet> {
  checkBindable(endpoint.parameters, args);
  const bound = bindPlaceholders(endpoint.sql, { ...args }, endpoint.parameters);
  const ordered = resultShape(endpoint.sql).ordered;
  const result = await executor.run({
    dbPath: db.path,
    sql: bound.sql,
    params: bound.params,
    timeoutMs,
    ...(sameRowsAs !== undefined ? { sameRowsAs } : {}),
  });
  return { columns: result.columns, rows: ordered ? result.rows : sortedRows(result.rows) };
}
