import type { ParameterSpec } from '../../runtime/rest/spec.js';
import type { ResolvedColumn } from './columns.js';
import { columnAffinity } from './columns.js';

/**
 * Which parameter types may be compared with a column. A bound value has no affinity, so
 * SQLite converts it by the column's affinity exactly as it would the literal it replaced;
 * the rule is about the API making sense: text columns take strings, INTEGER columns take
 * numbers, REAL columns take any number (an `integer` parameter would refuse 12.5, a value
 * the column holds), NUMERIC (dates, decimals) and untyped columns take either.
 */
export function typeFitsColumn(type: ParameterSpec['type'], column: ResolvedColumn): boolean {
  const affinity = columnAffinity(column.column);
  if (affinity === 'text') return type === 'string';
  if (affinity === 'integer') return type !== 'string';
  if (affinity === 'real') return type === 'number';
  return true;
}

/**
 * The type of a numeric parameter that replaces a literal: the compared column's, not the
 * literal's (`price > 10` on a REAL `price` takes 12.5 too). Only an INTEGER column, or a
 * literal compared with no known column (`'blob'`), keeps an integral literal `integer`.
 */
export function numericParameterType(
  affinity: ReturnType<typeof columnAffinity>,
  integral: boolean,
): 'integer' | 'number' {
  if (affinity === 'real' || affinity === 'numeric') return 'number';
  return integral ? 'integer' : 'number';
}
