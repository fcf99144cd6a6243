import type { DatabaseInfo } from '../../core/model.js';
import type { ColumnExpr, Expr } from '../sql/ast.js';
import { castAffinity } from '../sql/normalize.js';
import { same } from '../sql/scope.js';

/**
 * How SQLite compares two columns with `=`, from the schema: whether a join or a lookup that
 * compares them sees the same matches as the query that equated them.
 */

function columnInfo(db: DatabaseInfo, e: ColumnExpr) {
  const table = db.tables.find((t) => same(t.name, e.table ?? ''));
  return table?.columns.find((c) => same(c.name, e.column));
}

/** A table column's affinity class (`=` converts neither side of two of one class); null for anything else. */
export function affinityClass(db: DatabaseInfo, e: Expr): 'text' | 'numeric' | 'none' | null {
  if (e.kind !== 'column' || e.table === null || e.depth > 0) return null;
  const column = columnInfo(db, e);
  if (!column) return null;
  const affinity = castAffinity(column.type.toUpperCase());
  return affinity === 'text' ? 'text' : affinity === 'blob' ? 'none' : 'numeric';
}

/** `=` reads the left operand's collation, a join its own side's: the same only where both are BINARY. */
export function binaryCollation(db: DatabaseInfo, e: Expr): boolean {
  if (e.kind !== 'column' || e.table === null) return true;
  return !columnInfo(db, e)?.collation;
}

/**
 * Whether `a = b` holds exactly when the two are the same value, as GROUP BY and a key
 * lookup tell values apart: both table columns of one affinity class (`=` then converts
 * neither side), under BINARY collation (NOCASE would equate 'a' and 'A').
 */
export function comparesByIdentity(db: DatabaseInfo, a: Expr, b: Expr): boolean {
  const x = affinityClass(db, a);
  return x !== null && x === affinityClass(db, b) && binaryCollation(db, a) && binaryCollation(db, b);
}
