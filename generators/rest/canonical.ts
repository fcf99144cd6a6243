import type { DatabaseInfo } from '../../core/model.js';
import type { Expr, FromItem, OrderItem, Query } from '../sql/ast.js';
import { parseEndpointSql, placeholderIn } from './endpoint-query.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';

/**
 * A canonical form of an endpoint's query, equal for functionally equivalent endpoints:
 * the normalized AST (keywords, whitespace and quoting gone) with FROM aliases renamed by
 * position, result-column aliases dropped, AND/OR operands and commutative operands
 * sorted, `a > b` written `b < a`, a one-element IN as `=`, GROUP BY keys sorted, and
 * placeholders abstracted to their type and order of first appearance.
 */

export interface CanonicalForm {
  key: string;
  /** Parameter names in order of first appearance in the canonical form. */
  parameterOrder: string[];
}

type Node = unknown;

export function canonicalForm(spec: EndpointSpec, db: DatabaseInfo): CanonicalForm {
  const types = new Map(spec.parameters.map((p) => [p.name, p.type]));
  const parsed = parseEndpointSql(spec.sql, db);
  if (!parsed.ok) {
    // Unparseable (should not pass the format check): equal only to the very same text.
    const names = spec.parameters.map((p) => p.name);
    return {
      key: JSON.stringify(['text', spec.sql.replace(/\s+/g, ' ').trim(), spec.parameters]),
      parameterOrder: names,
    };
  }
  const tree = new Canonicalizer(types).query(parsed.value.query, []);
  const order: string[] = [];
  // A `param` is a placeholder's name (a string).
  JSON.stringify(tree, (key, value: unknown) => {
    if (key === 'param' && !order.includes(value as string)) order.push(value as string);
    return value;
  });
  return {
    key: JSON.stringify(tree, (key, value: unknown) => (key === 'param' ? order.indexOf(value as string) : value)),
    parameterOrder: order,
  };
}

/** Sort key of a node: its JSON without placeholder names (they are renamed afterwards). */
function sortKey(node: Node): string {
  return JSON.stringify(node, (key, value: unknown) => (key === 'param' ? undefined : value));
}

/** Stable: items with equal keys keep their order. */
function sortedBy<T>(items: T[], key: (item: T) => string): T[] {
  return items
    .map((item, i) => [key(item), i, item] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
    .map(([, , item]) => item);
}

function sorted(nodes: Node[]): Node[] {
  return sortedBy(nodes, sortKey);
}

/** Spellings of one SQLite function. */
const FUNCTION_SYNONYMS: Record<string, string> = { SUBSTRING: 'SUBSTR' };
const COMMUTATIVE = new Set(['=', '!=', '+', '*', 'IS', 'IS NOT']);
const FLIPPED: Record<string, string> = { '>': '<', '>=': '<=' };

class Canonicalizer {
  constructor(private readonly types: ReadonlyMap<string, string>) {}

  /** `scopes`: FROM-item name → positional name, innermost last. */
  query(query: Query, scopes: Map<string, string>[]): Node {
    if (query.kind === 'set') {
      return {
        set: query.op,
        left: this.query(query.left, scopes),
        right: this.query(query.right, scopes),
        orderBy: this.orderBy(query.orderBy, scopes),
        limit: this.maybe(query.limit, scopes),
        offset: this.maybe(query.offset, scopes),
      };
    }
    const scope = new Map<string, string>();
    const inner = [...scopes, scope];
    const joins = query.from?.joins ?? [];
    // Inner joins commute: their tables in a canonical order, their ON conditions one with
    // WHERE (the select list is explicit, `*` expanded, so its order does not move).
    const commuting = joins.every((j) => j.type === 'inner' || j.type === 'cross');
    const listed = query.from ? [query.from.base, ...joins.map((j) => j.item)] : [];
    // Derived tables see the enclosing scopes, not their siblings.
    const keyed = listed.map((item) => ({ item, node: this.fromItem(item, scopes) }));
    const items = commuting ? sortedBy(keyed, ({ node }) => JSON.stringify(node)) : keyed;
    const from = items.map(({ item, node }, i) => {
      scope.set(item.name.toLowerCase(), `f${scopes.length}_${i}`);
      return node;
    });
    const conditions = commuting
      ? [...joins.flatMap((j) => (j.on ? [j.on] : [])), ...(query.where ? [query.where] : [])]
      : [];
    return {
      select: true,
      distinct: query.distinct,
      columns: query.columns.map((c) => this.expr(c.expr, inner)),
      from,
      joins: commuting ? [] : joins.map((j) => ({ type: j.type, on: this.maybe(j.on, inner) })),
      where: commuting
        ? conditions.length
          ? { op: 'AND', args: sorted(conditions.flatMap((c) => this.chain(c, 'AND')).map((c) => this.expr(c, inner))) }
          : null
        : this.maybe(query.where, inner),
      groupBy: sorted(query.groupBy.map((e) => this.expr(e, inner))),
      having: this.maybe(query.having, inner),
      orderBy: this.orderBy(query.orderBy, inner),
      limit: this.maybe(query.limit, inner),
      offset: this.maybe(query.offset, inner),
    };
  }

  private fromItem(item: FromItem, scopes: Map<string, string>[]): Node {
    if (item.kind === 'table') return { table: item.table.toLowerCase() };
    // A recursive table is not the union its members spell, nor its own reference the initial SELECT.
    const derived = this.query(item.query, scopes);
    return item.recursive ? { derived, recursive: item.recursive } : { derived };
  }

  private orderBy(items: OrderItem[], scopes: Map<string, string>[]): Node {
    return items.map((o) => ({ expr: this.expr(o.expr, scopes), dir: o.direction }));
  }

  private maybe(expr: Expr | null, scopes: Map<string, string>[]): Node {
    return expr === null ? null : this.expr(expr, scopes);
  }

  expr(expr: Expr, scopes: Map<string, string>[]): Node {
    const e = (x: Expr) => this.expr(x, scopes);
    switch (expr.kind) {
      case 'literal': {
        const name = placeholderIn(expr);
        return name !== null
          ? { type: this.types.get(name) ?? 'string', param: name }
          : { lit: expr.type, value: expr.value };
      }
      case 'column': {
        const scope = scopes[scopes.length - 1 - expr.depth];
        return {
          col: expr.column.toLowerCase(),
          of: scope?.get(expr.source.toLowerCase()) ?? expr.source.toLowerCase(),
        };
      }
      case 'binary': {
        if (expr.op === 'AND' || expr.op === 'OR')
          return { op: expr.op, args: sorted(this.chain(expr, expr.op).map(e)) };
        if (expr.op in FLIPPED) return { op: FLIPPED[expr.op], args: [e(expr.right), e(expr.left)] };
        const args = [e(expr.left), e(expr.right)];
        return { op: expr.op, args: COMMUTATIVE.has(expr.op) ? sorted(args) : args };
      }
      case 'in':
        if (expr.list?.length === 1 && !expr.subquery) {
          return { op: expr.not ? '!=' : '=', args: sorted([e(expr.expr), e(expr.list[0])]) };
        }
        return {
          in: e(expr.expr),
          not: expr.not,
          list: expr.list?.map(e) ?? null,
          subquery: expr.subquery ? this.query(expr.subquery, scopes) : null,
        };
      case 'unary':
        return { unary: expr.op, operand: e(expr.operand) };
      case 'function':
        return { fn: FUNCTION_SYNONYMS[expr.name] ?? expr.name, args: expr.args.map(e) };
      case 'aggregate':
        return {
          agg: expr.name,
          distinct: expr.distinct,
          star: expr.star,
          arg: expr.arg ? e(expr.arg) : null,
          extra: expr.extraArgs.map(e),
        };
      case 'window':
        return {
          window: expr.name,
          args: expr.args.map(e),
          star: expr.star,
          distinct: expr.distinct,
          partitionBy: expr.partitionBy.map(e),
          orderBy: expr.orderBy.map((o) => ({ expr: e(o.expr), dir: o.direction, nulls: o.nulls })),
          frame: expr.frame,
        };
      case 'case':
        return { case: expr.whens.map((w) => [e(w.when), e(w.then)]), else: expr.else ? e(expr.else) : null };
      case 'cast':
        return { cast: e(expr.expr), to: expr.to };
      case 'between':
        return { between: e(expr.expr), not: expr.not, low: e(expr.low), high: e(expr.high) };
      case 'like':
        return { like: expr.op, not: expr.not, expr: e(expr.expr), pattern: e(expr.pattern) };
      case 'isNull':
        return { isNull: e(expr.expr), not: expr.not };
      case 'exists':
        return { exists: this.query(expr.query, scopes), not: expr.not };
      case 'subquery':
        return { subquery: this.query(expr.query, scopes) };
    }
  }

  /** The operands of a chain of one associative operator (`a AND (b AND c)` → a, b, c). */
  private chain(expr: Expr, op: 'AND' | 'OR'): Expr[] {
    return expr.kind === 'binary' && expr.op === op
      ? [...this.chain(expr.left, op), ...this.chain(expr.right, op)]
      : [expr];
  }
}
