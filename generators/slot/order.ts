import type { OrderItem } from '../sql/ast.js';
import type { TableRef } from './builder.js';
import type { PassContext } from './context.js';

/**
 * ORDER BY: one stable sort_data per key, last key first, so that the first key decides
 * and later keys break its ties. Every key is computed before the first sort. `rows`
 * (a derived table's LIMIT/OFFSET) goes on the last sort, which orders by the first key.
 */
export function sortPass(
  ctx: PassContext,
  table: TableRef,
  orderBy: OrderItem[],
  rows?: { limit: number | null; offset: number },
): TableRef {
  let t = table;
  const keys: string[] = [];
  for (const item of orderBy) {
    const [t1, key] = ctx.exprs.key(t, item.expr);
    t = t1;
    keys.push(key);
  }
  for (let i = orderBy.length - 1; i >= 0; i--)
    t = ctx.b.sort(t, keys[i], orderBy[i].direction === 'asc', i === 0 ? rows : undefined);
  return t;
}
