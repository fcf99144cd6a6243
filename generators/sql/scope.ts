import type { DatabaseInfo } from '../../core/model.js';
import type { ColumnExpr, SelectItem } from './ast.js';

/**
 * Name resolution as SQLite does it (identifiers are case-insensitive): a query's FROM items
 * and their columns, chained to the enclosing query's scope for correlated references.
 */

export interface ScopeItem {
  /** Alias, else the table name as written. */
  name: string;
  /** Underlying table (schema case), null for a derived table. */
  table: string | null;
  /** Column names in the schema's (or derived query's) case. */
  columns: string[];
}

export class Scope {
  readonly items: ScopeItem[] = [];
  /** SELECT items already normalized: WHERE/GROUP BY/HAVING may name their aliases. */
  selectItems: SelectItem[] = [];
  /** Set when a name resolved in an enclosing scope (the query is correlated). */
  correlated = false;
  /** The SELECT's named windows (`WINDOW w AS (...)`), as the parser gives them, by lower-cased name. */
  readonly windows = new Map<string, unknown>();

  constructor(readonly parent: Scope | null) {}

  add(item: ScopeItem): void {
    if (this.items.some((i) => same(i.name, item.name))) {
      throw new NameError(`duplicate FROM item name "${item.name}"`);
    }
    this.items.push(item);
  }

  /** A column reference, searched in this scope then in the enclosing ones. */
  resolveColumn(qualifier: string | null, column: string): ColumnExpr | null {
    let depth = 0;
    for (const scope of this.outwards()) {
      const found = scope.lookup(qualifier, column);
      if (found) {
        this.markCorrelated(depth);
        return { kind: 'column', source: found.item.name, table: found.item.table, column: found.column, depth };
      }
      depth++;
    }
    return null;
  }

  /** This scope, then the enclosing ones outwards. */
  private *outwards(): Generator<Scope> {
    yield this;
    if (this.parent) yield* this.parent.outwards();
  }

  private lookup(qualifier: string | null, column: string): { item: ScopeItem; column: string } | null {
    const candidates = qualifier === null ? this.items : this.itemsNamed(qualifier);
    const matches: { item: ScopeItem; column: string }[] = [];
    for (const item of candidates) {
      const name = item.columns.find((c) => same(c, column));
      if (name !== undefined) matches.push({ item, column: name });
    }
    if (matches.length > 1) throw new NameError(`ambiguous column name: ${column}`);
    return matches[0] ?? null;
  }

  /** By alias; a table's own name only when nothing else is named so (lenient, as BIRD needs). */
  private itemsNamed(qualifier: string): ScopeItem[] {
    const byName = this.items.filter((i) => same(i.name, qualifier));
    if (byName.length > 0) return byName;
    return this.items.filter((i) => i.table !== null && same(i.table, qualifier));
  }

  hasQualifier(qualifier: string): boolean {
    for (const scope of this.outwards()) {
      if (scope.itemsNamed(qualifier).length > 0) return true;
    }
    return false;
  }

  /** Every scope from this one up to (excluding) the one `depth` levels up refers outside itself. */
  private markCorrelated(depth: number): void {
    if (depth <= 0) return;
    this.correlated = true;
    this.parent?.markCorrelated(depth - 1);
  }

  selectAlias(name: string): number {
    return this.selectItems.findIndex((s) => s.alias !== null && same(s.alias, name));
  }
}

/** A name that does not resolve (SQLite would refuse the statement). */
export class NameError extends Error {
  override name = 'NameError';
}

export function same(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export function schemaTable(db: DatabaseInfo, name: string): ScopeItem | null {
  const info = db.tables.find((t) => same(t.name, name));
  return info ? { name: info.name, table: info.name, columns: info.columns.map((c) => c.name) } : null;
}
