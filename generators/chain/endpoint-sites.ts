import type { DatabaseInfo } from '../../core/model.js';
import type { EndpointSpec, ParameterSpec } from '../../runtime/rest/spec.js';
import type { Expr } from '../sql/ast.js';
import { parseQuery } from '../sql/normalize.js';
import { withSampleValues } from '../rest/format-check.js';
import { placeholderSites } from '../rest/placeholder-sites.js';
import { firstSelect } from '../rest/select-items.js';
import type { SiteOp } from '../rest/value-sites.js';

/**
 * What a chain can connect of an endpoint (issue 36): the schema column each parameter is
 * compared with, and the schema column each response field is. A hop binds a parameter of
 * one endpoint to a field of another where the two columns hold the same values (links.ts).
 * Read off the endpoint's SQL the way the format check reads it (placeholder-sites.ts), so a
 * parameter counts only where it stands alone as a predicate's operand.
 */

/** A schema column, `table.column` in the schema's case. */
export interface SchemaColumn {
  table: string;
  column: string;
}

export interface ParameterSite {
  param: ParameterSpec;
  column: SchemaColumn;
  op: SiteOp;
  /**
   * The function the column is read through (`STRFTIME`), upper-cased, and its format
   * (`'%Y'`): a date column compared by its year takes a year.
   */
  fn: string | null;
  fnFormat: string | null;
}

export interface FieldSite {
  /** Position in the response's fields (and the SQL's result columns). */
  index: number;
  name: string;
  column: SchemaColumn;
}

export interface EndpointSites {
  /** Parameters compared with one column each, in SQL order; a parameter used twice is not a site. */
  params: ParameterSite[];
  /** Response fields that are a column as it is stored (no expression, no aggregate). */
  fields: FieldSite[];
}

/**
 * The schema column whose stored values an expression gives: the column itself, or its MIN or
 * MAX (one of its values; a count, sum or average is not).
 */
function storedColumn(expr: Expr): SchemaColumn | null {
  if (expr.kind === 'column')
    return expr.table !== null && expr.depth === 0 ? { table: expr.table, column: expr.column } : null;
  if (expr.kind === 'aggregate' && (expr.name === 'MIN' || expr.name === 'MAX') && expr.arg)
    return storedColumn(expr.arg);
  return null;
}

export function endpointSites(endpoint: EndpointSpec, fieldNames: readonly string[], db: DatabaseInfo): EndpointSites {
  const parsed = parseQuery(withSampleValues(endpoint), db);
  if (!parsed.ok) return { params: [], fields: [] };
  const { query } = parsed.value;
  const byName = new Map(endpoint.parameters.map((p) => [p.name, p]));
  const sites = placeholderSites(endpoint.sql, query, db);
  const params = sites.flatMap(({ name, site, column }): ParameterSite[] => {
    const param = byName.get(name);
    if (!param || !column || sites.filter((s) => s.name === name).length > 1) return [];
    if (!site.bare && site.fn === null) return [];
    return [
      {
        param,
        column: { table: column.table.name, column: column.column.name },
        op: site.op,
        fn: site.fn,
        fnFormat: site.fnFormat,
      },
    ];
  });
  const select = firstSelect(query);
  const fields =
    query.kind === 'select' && select.columns.length === fieldNames.length
      ? select.columns.flatMap((item, index): FieldSite[] => {
          const column = storedColumn(item.expr);
          return column ? [{ index, name: fieldNames[index], column }] : [];
        })
      : [];
  return { params, fields };
}
