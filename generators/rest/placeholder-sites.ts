import type { DatabaseInfo } from '../../core/model.js';
import type { Query } from '../sql/ast.js';
import { tokenize } from '../../runtime/sql/lexer.js';
import { scopedColumnResolver, type ResolvedColumn } from './columns.js';
import { findValueSites, type ValueSite } from './value-sites.js';

/**
 * Where an endpoint's placeholders are compared, and with which schema column (resolved
 * through the scope each placeholder is written in): the format check types a parameter by
 * it, the value reading (parameter-values.ts) reads that column's values for its description.
 */

export interface PlaceholderSite {
  /** The parameter's name (the placeholder without its colon). */
  name: string;
  site: ValueSite;
  /** The column the other operand names (exactly that column when `site.bare`; inside `site.fn` when there is one). */
  column: ResolvedColumn | null;
}

/** The placeholders standing alone as a predicate's operand, in SQL order. `query` is the SQL parsed. */
export function placeholderSites(sql: string, query: Query, db: DatabaseInfo): PlaceholderSite[] {
  const tokens = tokenize(sql);
  const resolve = scopedColumnResolver(tokens, query, db);
  return findValueSites(tokens).flatMap((site) => {
    const token = tokens[site.last];
    if (token.kind !== 'param' || site.first !== site.last) return [];
    const column = site.columns.length ? resolve(site.columns[0], site.first) : null;
    return [{ name: token.text.slice(1), site, column }];
  });
}
