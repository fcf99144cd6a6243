import { createRequire } from 'node:module';
import sqliteGrammar from 'node-sql-parser/build/sqlite.js';
import type { DatabaseInfo } from '../../core/model.js';
import { LruMap } from '../../core/lru.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import type {
  AggregateName,
  BinaryOp,
  CastExpr,
  Expr,
  FromClause,
  FromItem,
  Join,
  JoinType,
  LiteralExpr,
  NormalizedQuery,
  OrderItem,
  Query,
  SelectItem,
  SelectQuery,
  SetOperator,
  WindowExpr,
  WindowOrderItem,
} from './ast.js';
import { outputNames } from './ast.js';
import { reassociate } from './precedence.js';
import { functionName, type Raw } from './raw-ast.js';
import { bracketsAsBackticks, COMPARISON_SPELLINGS } from '../../runtime/sql/lexer.js';
import { NameError, Scope, same, schemaTable } from './scope.js';

/**
 * One grammar per dialect, from node-sql-parser's single-dialect builds: its main module bundles
 * every dialect it knows (2.4 MB of source, ~14 MB of the main process's memory) for three used.
 * The fallbacks are loaded (synchronously: they are CommonJS) when a statement first needs
 * one: most parse with sqlite's, and each grammar costs a process ~0.1 CPU-s to load.
 */
type Dialect = (typeof DIALECTS)[number];
type Grammar = typeof sqliteGrammar;
type Parser = InstanceType<Grammar['Parser']>;
const grammars: Partial<Record<Dialect, Grammar>> = { sqlite: sqliteGrammar };
const requireGrammar = createRequire(import.meta.url);

function grammarOf(dialect: Dialect): Grammar {
  return (grammars[dialect] ??= requireGrammar(`node-sql-parser/build/${dialect}.js`) as Grammar);
}

/**
 * SQL text -> normalized AST (ast.ts). node-sql-parser's sqlite grammar first; its mysql
 * grammar as a fallback for the few statements the sqlite grammar refuses (`Count` as a
 * column name, `SUM(DISTINCT x)`), which mysql parses into the same node shapes. Every
 * name is resolved here, so a statement SQLite would refuse is a parse_error too.
 */

const DIALECTS = ['sqlite', 'mysql', 'postgresql'] as const;

/**
 * The sqlite grammar accepts DISTINCT only inside COUNT. A last attempt renames
 * `SUM(DISTINCT x)` to the marker function `SUM__DISTINCT(x)` (outside string literals),
 * which the normalizer turns back into a DISTINCT aggregate: same meaning, parseable.
 */
const DISTINCT_MARK = '__DISTINCT';

function markDistinctAggregates(sql: string): string {
  return sql.replace(
    /('(?:[^']|'')*')|\b(SUM|AVG|MIN|MAX|TOTAL|GROUP_CONCAT)\s*\(\s*DISTINCT\s+/gi,
    (match, literal, name) => (literal ? match : `${name}${DISTINCT_MARK}(`),
  );
}

/**
 * The same SQL is parsed again and again over an item's life (the parse stage, row-order's
 * proofs, REST's template, scope and format checks, dedup): about 2.5 parses a distinct text
 * on BIRD dev, node-sql-parser being the main process's largest cost. A parse is a function
 * of the text and the database, so the recent ones are kept, frozen: shared, never changed
 * (a consumer that wrote into a tree would throw, not corrupt another's).
 */
const PARSES_KEPT = 1024;
const parses = new LruMap<string, Outcome<NormalizedQuery>>(PARSES_KEPT);
const databaseIds = new WeakMap<DatabaseInfo, number>();
let nextDatabaseId = 0;

export function parseQuery(sql: string, db: DatabaseInfo): Outcome<NormalizedQuery> {
  let id = databaseIds.get(db);
  if (id === undefined) databaseIds.set(db, (id = nextDatabaseId++));
  return parses.getOrSet(`${id}\n${sql}`, () => deepFreeze(parseUncached(sql, db)));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function parseUncached(sql: string, db: DatabaseInfo): Outcome<NormalizedQuery> {
  let firstError: string | null = null;
  // The grammars have no [bracketed] names; backticks are the same names to SQLite.
  const readable = bracketsAsBackticks(sql);
  const marked = markDistinctAggregates(readable);
  const attempts = DIALECTS.map((dialect) => ({ dialect, text: readable }));
  if (marked !== readable) attempts.push({ dialect: 'sqlite', text: marked });
  for (const { dialect, text } of attempts) {
    const parser = new (grammarOf(dialect).Parser)();
    let raw: Raw;
    try {
      raw = parser.astify(text, { database: dialect });
    } catch (error) {
      firstError ??= messageOf(error);
      continue;
    }
    if (Array.isArray(raw)) {
      if (raw.length !== 1) return reject('parse_error', `expected one statement, got ${raw.length}`);
      raw = raw[0];
    }
    if (raw?.type !== 'select') return reject('parse_error', `not a SELECT statement (${raw?.type})`);
    try {
      const normalizer = new Normalizer(db, parser, dialect);
      // The grammar's operator precedence is not SQLite's: precedence.ts.
      const query = normalizer.query(reassociate(raw), null);
      const recursive = normalizer.recursiveTables();
      return accept({ sql, dialect, query, ...(recursive.length > 0 ? { recursive } : {}) });
    } catch (error) {
      if (error instanceof NameError || error instanceof SyntaxShapeError) {
        return reject('parse_error', error.message);
      }
      throw error;
    }
  }
  return reject('parse_error', firstError ?? 'unparseable');
}

/** A node shape we do not understand. */
class SyntaxShapeError extends Error {
  override name = 'SyntaxShapeError';
}

/**
 * A WITH table named inside its own body (or a body it reads): the normalization of that
 * body stops and starts again as a recursive table's (Normalizer.normalizeWithTable).
 */
class SelfReference extends Error {
  override name = 'SelfReference';
  constructor(readonly table: WithTable) {
    super(`WITH table ${table.name} names itself`);
  }
}

type Clause = 'select' | 'where' | 'group' | 'having' | 'order' | 'on' | 'limit';

const AGGREGATES: ReadonlySet<string> = new Set(['COUNT', 'SUM', 'AVG', 'MIN', 'MAX', 'TOTAL', 'GROUP_CONCAT']);

const BINARY_OPS: Record<string, BinaryOp> = {
  ...COMPARISON_SPELLINGS,
  '+': '+',
  '-': '-',
  '*': '*',
  '/': '/',
  '%': '%',
  '||': '||',
  AND: 'AND',
  '&&': 'AND',
  OR: 'OR',
  IS: 'IS',
  'IS NOT': 'IS NOT',
};

/**
 * One WITH table: its definition, where it was defined and what its body sees. A
 * reference to it is a derived table normalized from the body (so a table referenced
 * twice is two derived tables with the same query).
 */
interface WithTable {
  name: string;
  /** `WITH x(a, b) AS (...)`: the names of its columns; null when not given. */
  columns: string[] | null;
  body: Raw;
  /** The scope the defining query's derived tables see (the defining query's parent). */
  parent: Scope | null;
  /** The WITH tables its body sees: its own clause's (SQLite allows forward references) and the enclosing ones. */
  visible: WithTables;
}

interface WithTables {
  tables: WithTable[];
  outer: WithTables | null;
}

/** A recursive WITH table whose recursive SELECT is being normalized. */
interface Recursion {
  table: WithTable;
  /** The table's rows as its recursive SELECT reads them: the initial SELECT, with the table's column names. */
  self: Query;
  /** The nesting depth (Normalizer.depth) of the recursive SELECT: the only one whose FROM may name the table. */
  depth: number;
  named: boolean;
}

class Normalizer {
  /** The WITH tables visible where the normalizer is. */
  private withTables: WithTables | null = null;
  /** WITH tables whose bodies are being normalized: one named again is a recursive reference. */
  private readonly expanding: WithTable[] = [];
  /** The recursive tables whose recursive SELECT is being normalized, innermost last. */
  private readonly recursions: Recursion[] = [];
  /** How many SELECTs enclose the one being normalized. */
  private depth = 0;
  /** The names of the recursive WITH tables met, in order. */
  private readonly recursive: string[] = [];

  constructor(
    private readonly db: DatabaseInfo,
    private readonly parser: Parser,
    private readonly dialect: Dialect,
  ) {}

  /** A query whose names may refer to `parent`'s (the enclosing query's scope). */
  query(raw: Raw, parent: Scope | null): Query {
    if (raw.with) {
      // A WITH clause sits on the first SELECT of a compound and holds for all of it.
      const outer = this.withTables;
      this.withTables = this.withClause(raw.with, parent, outer);
      try {
        return this.query({ ...raw, with: null }, parent);
      } finally {
        this.withTables = outer;
      }
    }
    return raw._next ? this.setQuery(raw, parent) : this.select(raw, parent);
  }

  /** The names of the recursive WITH tables the query read, once each. */
  recursiveTables(): string[] {
    return [...new Set(this.recursive)];
  }

  /**
   * Common table expressions. Whether one is recursive is what SQLite decides: its body
   * names it (`RECURSIVE` or not), which withTableItem finds out.
   */
  private withClause(raw: Raw[], parent: Scope | null, outer: WithTables | null): WithTables {
    const clause: WithTables = { tables: [], outer };
    for (const node of raw) {
      const name = identifier(node.name);
      if (name === null) throw new SyntaxShapeError(`unsupported WITH table ${JSON.stringify(node).slice(0, 80)}`);
      if (clause.tables.some((t) => same(t.name, name))) throw new NameError(`duplicate WITH table name: ${name}`);
      const columns = Array.isArray(node.columns) ? (node.columns as Raw[]).map(columnName) : null;
      // sqlite/mysql wrap the body as `{ ast }`; postgresql gives the SELECT itself.
      const body: Raw = node.stmt?.ast ?? node.stmt;
      if (body?.type !== 'select') throw new SyntaxShapeError(`WITH table ${name} is not a SELECT`);
      clause.tables.push({ name, columns, body, parent, visible: clause });
    }
    return clause;
  }

  private withTable(name: string): WithTable | null {
    for (let scope = this.withTables; scope; scope = scope.outer) {
      const found = scope.tables.find((t) => same(t.name, name));
      if (found) return found;
    }
    return null;
  }

  /** A reference to a WITH table: the derived table of its body, named `name` in `scope`. */
  private withTableItem(table: WithTable, name: string, scope: Scope): FromItem {
    if (this.expanding.includes(table)) return this.selfReference(table, name, scope);
    const saved = this.withTables;
    this.withTables = table.visible;
    this.expanding.push(table);
    let body: { query: Query; recursive: boolean };
    try {
      body = this.normalizeWithTable(table);
    } finally {
      this.expanding.pop();
      this.withTables = saved;
    }
    let query = body.query;
    if (query.correlated) {
      // Its outer names count levels from where it was defined, not from here.
      if (table.parent !== scope.parent)
        throw new SyntaxShapeError(
          `WITH table ${table.name} refers to an enclosing query and is used in a nested query`,
        );
      scope.correlated = true;
    }
    if (table.columns) query = withColumnNames(query, table.columns, table.name);
    scope.add({ name, table: null, columns: outputNames(query) });
    if (!body.recursive) return { kind: 'derived', name, query };
    this.recursive.push(table.name);
    return { kind: 'derived', name, query, recursive: 'table' };
  }

  /** A WITH table's body: as any query, unless it names the table (then SQLite makes it recursive). */
  private normalizeWithTable(table: WithTable): { query: Query; recursive: boolean } {
    try {
      return { query: this.query(table.body, table.parent), recursive: false };
    } catch (error) {
      if (!(error instanceof SelfReference) || error.table !== table) throw error;
    }
    return { query: this.recursiveQuery(table), recursive: true };
  }

  /**
   * A recursive table's body, in the form SQLite's documentation gives it (lang_with.html):
   * an initial SELECT that does not name the table, UNION or UNION ALL, a recursive SELECT
   * whose FROM names it exactly once (not in a subquery), an ORDER BY and LIMIT of the
   * whole. SQLite's several initial or recursive SELECTs are refused: nothing needs them.
   */
  private recursiveQuery(table: WithTable): Query {
    const { members, ops, tail } = compoundParts(table.body);
    const shape = `recursive WITH table ${table.name}`;
    if (table.body.with) throw new SyntaxShapeError(`${shape} has a WITH clause of its own`);
    if (members.length !== 2 || (ops[0] !== 'union' && ops[0] !== 'union all'))
      throw new SyntaxShapeError(`${shape} is not <initial SELECT> UNION [ALL] <recursive SELECT>`);
    let initial: { query: SelectQuery; scope: Scope };
    try {
      initial = this.scopedSelect(members[0], table.parent);
    } catch (error) {
      if (error instanceof SelfReference && error.table === table)
        throw new SyntaxShapeError(`${shape}: its initial SELECT names it`);
      throw error;
    }
    const self = table.columns ? withColumnNames(initial.query, table.columns, table.name) : initial.query;
    const recursion: Recursion = { table, self, depth: this.depth + 1, named: false };
    this.recursions.push(recursion);
    let step: { query: SelectQuery; scope: Scope };
    try {
      step = this.scopedSelect(members[1], table.parent);
    } finally {
      this.recursions.pop();
    }
    if (!recursion.named) throw new SyntaxShapeError(`${shape}: its recursive SELECT does not name it`);
    return this.compound([initial, step], ops, tail, table.parent);
  }

  /** The recursive SELECT's reference to its own table: the rows of the previous round (DerivedFromItem `recursive`). */
  private selfReference(table: WithTable, name: string, scope: Scope): FromItem {
    const recursion = this.recursions.find((r) => r.table === table);
    if (!recursion) throw new SelfReference(table);
    const shape = `recursive WITH table ${table.name}`;
    if (this.depth !== recursion.depth)
      throw new SyntaxShapeError(`${shape} is named in a subquery of its recursive SELECT`);
    if (recursion.named) throw new SyntaxShapeError(`${shape} is named twice in its recursive SELECT`);
    recursion.named = true;
    scope.add({ name, table: null, columns: outputNames(recursion.self) });
    return { kind: 'derived', name, query: recursion.self, recursive: 'self' };
  }

  private setQuery(raw: Raw, parent: Scope | null): Query {
    const { members, ops, tail } = compoundParts(raw);
    return this.compound(
      members.map((m) => this.scopedSelect(m, parent)),
      ops,
      tail,
      parent,
    );
  }

  /** The members of a compound, normalized, as one query: left-deep, with the compound's ORDER BY/LIMIT. */
  private compound(
    normalized: { query: SelectQuery; scope: Scope }[],
    ops: SetOperator[],
    tail: { orderby: Raw; limit: Raw },
    parent: Scope | null,
  ): Query {
    const plain = normalized.map((n) => n.query);
    let query: Query = plain[0];
    for (let i = 1; i < plain.length; i++) {
      query = {
        kind: 'set',
        op: ops[i - 1],
        left: query,
        right: plain[i],
        orderBy: [],
        limit: null,
        offset: null,
        correlated: query.correlated || plain[i].correlated,
      };
    }
    if (query.kind === 'set') {
      query.orderBy = this.compoundOrderBy(tail.orderby, normalized);
      const { limit, offset } = this.limit(tail.limit, new Scope(parent));
      query.limit = limit;
      query.offset = offset;
    }
    return query;
  }

  /**
   * A compound's ORDER BY names one of its result columns (SQLite, select.html "ORDER BY"):
   * an ordinal; else, searching the members left to right, a result alias or an expression
   * identical to a member's result column (resolved in that member's FROM). The term
   * sorts by the compound's column at that position.
   */
  private compoundOrderBy(raw: Raw[] | null, members: { query: SelectQuery; scope: Scope }[]): OrderItem[] {
    const first = members[0].query.columns;
    return (raw ?? []).map((node, n): OrderItem => {
      const direction = String(node.type ?? 'ASC').toUpperCase() === 'DESC' ? 'desc' : 'asc';
      const index = ordinalOf(node.expr, first.length) ?? this.compoundColumn(node.expr, members);
      if (index === null) throw new NameError(`${n + 1}. ORDER BY term does not match any column in the result set`);
      return { expr: first[index].expr, direction, selectIndex: index };
    });
  }

  private compoundColumn(node: Raw, members: { query: SelectQuery; scope: Scope }[]): number | null {
    const bare = bareName(node);
    for (const { query, scope } of members) {
      if (bare !== null) {
        const index = scope.selectAlias(bare);
        if (index >= 0) return index;
      }
      let expr: Expr;
      try {
        expr = this.expr(node, scope, 'order');
      } catch (error) {
        if (error instanceof NameError) continue;
        throw error;
      }
      const index = query.columns.findIndex((c) => sameExpr(c.expr, expr));
      if (index >= 0) return index;
    }
    return null;
  }

  private select(raw: Raw, parent: Scope | null): SelectQuery {
    return this.scopedSelect(raw, parent).query;
  }

  /** A SELECT and the scope its names resolved in. */
  private scopedSelect(raw: Raw, parent: Scope | null): { query: SelectQuery; scope: Scope } {
    this.depth++;
    try {
      return this.scopedSelectHere(raw, parent);
    } finally {
      this.depth--;
    }
  }

  private scopedSelectHere(raw: Raw, parent: Scope | null): { query: SelectQuery; scope: Scope } {
    const scope = new Scope(parent);
    for (const definition of (raw.window?.expr as Raw[] | undefined) ?? []) {
      scope.windows.set(String(definition.name).toLowerCase(), definition.as_window_specification);
    }
    const from = raw.from ? this.from(raw.from, scope) : null;
    const columns = this.selectItems(raw.columns, scope);
    scope.selectItems = columns;
    const where = raw.where ? this.expr(raw.where, scope, 'where') : null;
    const groupBy = this.groupBy(raw.groupby, scope, columns);
    const having = raw.having ? this.expr(raw.having, scope, 'having') : null;
    const orderBy = this.orderBy(raw.orderby, scope, columns);
    const { limit, offset } = this.limit(raw.limit, scope);
    const query: SelectQuery = {
      kind: 'select',
      // A string (sqlite, mysql) or `{type}` (postgresql, whose `{type: null}` means no DISTINCT).
      distinct:
        String(typeof raw.distinct === 'string' ? raw.distinct : (raw.distinct?.type ?? '')).toUpperCase() ===
        'DISTINCT',
      columns,
      from,
      where,
      groupBy,
      having,
      orderBy,
      limit,
      offset,
      correlated: scope.correlated,
    };
    return { query, scope };
  }

  // ---- FROM ---------------------------------------------------------------------------

  private from(raw: Raw[], scope: Scope): FromClause {
    const items: FromItem[] = [];
    const joins: Join[] = [];
    raw.forEach((node, index) => {
      const item = this.fromItem(node, scope);
      items.push(item);
      if (index === 0) return;
      const type = joinType(node.join);
      let on: Expr | null = null;
      if (node.on) on = this.expr(node.on, scope, 'on');
      else if (node.using) on = this.using(node.using, items, scope);
      joins.push({ type: on === null && type === 'inner' ? 'cross' : type, item, on });
    });
    return { base: items[0], joins };
  }

  private fromItem(node: Raw, scope: Scope): FromItem {
    if (node.expr?.ast) {
      // A derived table sees the enclosing query's names, not its siblings' (no LATERAL).
      const query = this.query(node.expr.ast, scope.parent);
      if (query.correlated) scope.correlated = true;
      const name = identifier(node.as) ?? `subquery_${scope.items.length + 1}`;
      scope.add({ name, table: null, columns: outputNames(query) });
      return { kind: 'derived', name, query };
    }
    const table = identifier(node.table);
    if (table === null) throw new SyntaxShapeError(`unsupported FROM item ${JSON.stringify(node).slice(0, 80)}`);
    // A WITH table hides a schema table of the same name (not a schema-qualified one).
    const withTable = node.db ? null : this.withTable(table);
    if (withTable) return this.withTableItem(withTable, identifier(node.as) ?? table, scope);
    const info = schemaTable(this.db, table);
    if (!info) throw new NameError(`no such table: ${table}`);
    const name = identifier(node.as) ?? table;
    scope.add({ ...info, name });
    return { kind: 'table', name, table: info.table as string };
  }

  /** `JOIN b USING (c)` is `ON a.c = b.c` with `a` the earlier item holding `c`. */
  private using(using: Raw[], items: FromItem[], scope: Scope): Expr {
    const right = items[items.length - 1];
    const conditions = using.map((u): Expr => {
      const column = identifier(u);
      if (column === null) throw new SyntaxShapeError(`unsupported USING column ${JSON.stringify(u)}`);
      const leftItem = scope.items.slice(0, items.length - 1).find((i) => i.columns.some((c) => same(c, column)));
      if (!leftItem) throw new NameError(`cannot join using column ${column}`);
      const l = scope.resolveColumn(leftItem.name, column);
      const r = scope.resolveColumn(right.name, column);
      if (!l || !r) throw new NameError(`cannot join using column ${column}`);
      return { kind: 'binary', op: '=', left: l, right: r };
    });
    return conditions.reduce((a, b) => ({ kind: 'binary', op: 'AND', left: a, right: b }));
  }

  // ---- SELECT list, GROUP BY, ORDER BY, LIMIT -----------------------------------------------

  private selectItems(raw: Raw[], scope: Scope): SelectItem[] {
    const items: SelectItem[] = [];
    for (const column of raw) {
      const expr = column.expr;
      if (expr?.type === 'column_ref' && columnName(expr) === '*') {
        items.push(...this.star(identifier(expr.table), scope));
        continue;
      }
      if (expr?.type === 'star') {
        items.push(...this.star(null, scope));
        continue;
      }
      const normalized = this.expr(expr, scope, 'select');
      const alias = identifier(column.as);
      const name = alias ?? (normalized.kind === 'column' ? normalized.column : this.text(expr));
      items.push({ expr: normalized, alias, name });
    }
    return items;
  }

  private star(qualifier: string | null, scope: Scope): SelectItem[] {
    const items = qualifier === null ? scope.items : scope.items.filter((i) => same(i.name, qualifier));
    if (items.length === 0) throw new NameError(qualifier ? `no such table: ${qualifier}` : 'no tables specified');
    return items.flatMap((item) =>
      item.columns.map((c) => ({
        expr: { kind: 'column', source: item.name, table: item.table, column: c, depth: 0 },
        alias: null,
        name: c,
      })),
    );
  }

  private groupBy(raw: Raw, scope: Scope, columns: SelectItem[]): Expr[] {
    const list: Raw[] = Array.isArray(raw) ? raw : (raw?.columns ?? []);
    return list.map((node) => {
      const ordinal = ordinalOf(node, columns.length);
      return ordinal !== null ? columns[ordinal].expr : this.expr(node, scope, 'group');
    });
  }

  private orderBy(raw: Raw[] | null, scope: Scope, columns: SelectItem[]): OrderItem[] {
    return (raw ?? []).map((node): OrderItem => {
      // Dropped, it would sort NULLs where SQLite's default puts them, not where the query asks.
      if (node.nulls) throw new SyntaxShapeError(`${String(node.nulls)} is not supported`);
      const direction = String(node.type ?? 'ASC').toUpperCase() === 'DESC' ? 'desc' : 'asc';
      const ordinal = ordinalOf(node.expr, columns.length);
      if (ordinal !== null) return { expr: columns[ordinal].expr, direction, selectIndex: ordinal };
      // ORDER BY prefers a result alias over a column of the same name (SQLite rule).
      const bare = bareName(node.expr);
      if (bare !== null) {
        const index = scope.selectAlias(bare);
        if (index >= 0) return { expr: columns[index].expr, direction, selectIndex: index };
      }
      const expr = this.expr(node.expr, scope, 'order');
      const index = columns.findIndex((c) => sameExpr(c.expr, expr));
      return { expr, direction, selectIndex: index >= 0 ? index : null };
    });
  }

  private limit(raw: Raw, scope: Scope): { limit: Expr | null; offset: Expr | null } {
    const values: Raw[] = raw?.value ?? [];
    if (values.length === 0) return { limit: null, offset: null };
    const [a, b] = values.map((v) => this.expr(v, scope, 'limit'));
    if (values.length === 1) return { limit: a, offset: null };
    // `LIMIT n OFFSET m` vs MySQL-style `LIMIT m, n`.
    return raw.seperator === ',' ? { limit: b, offset: a } : { limit: a, offset: b };
  }

  // ---- expressions --------------------------------------------------------------------------

  expr(node: Raw, scope: Scope, clause: Clause): Expr {
    if (node === null || node === undefined) throw new SyntaxShapeError('missing expression');
    // No consumer models collations: dropping one would silently compare case-sensitively.
    if (node.collate || node.suffix?.collate) throw new SyntaxShapeError('COLLATE is not supported');
    if (node.ast) return { kind: 'subquery', query: this.subquery(node.ast, scope) };
    switch (node.type) {
      case 'number':
        return numberLiteral(node.value);
      // node-sql-parser keeps a quoted string's doubled quotes as written.
      case 'single_quote_string':
      case 'string':
      case 'natural_string':
        return textLiteral(String(node.value).replace(/''/g, "'"));
      case 'double_quote_string':
        return this.doubleQuoted(String(node.value).replace(/""/g, '"'), scope, clause);
      case 'bool':
        return { kind: 'literal', type: 'integer', value: node.value ? 1 : 0, raw: node.value ? 'TRUE' : 'FALSE' };
      case 'null':
        return { kind: 'literal', type: 'null', value: null, raw: 'NULL' };
      case 'column_ref':
        return this.column(node, scope, clause);
      case 'binary_expr':
        return this.binary(node, scope, clause);
      case 'unary_expr':
        return this.unary(node, scope, clause);
      case 'aggr_func':
        return this.aggregate(String(node.name).toUpperCase(), node, scope, clause);
      case 'window_func':
        return this.window(functionName(node).toUpperCase(), node, scope, clause);
      case 'function':
        return this.func(node, scope, clause);
      case 'case':
        return this.caseExpr(node, scope, clause);
      case 'cast':
        return this.cast(node, scope, clause);
      case 'expr_list':
        if (node.value?.length === 1) return this.expr(node.value[0], scope, clause);
        throw new SyntaxShapeError('row values are not supported');
      default:
        throw new SyntaxShapeError(`unsupported expression type ${node.type}`);
    }
  }

  private subquery(ast: Raw, scope: Scope): Query {
    return this.query(ast, scope);
  }

  /** SQLite: a double-quoted token is an identifier if it names one, else a string literal. */
  private doubleQuoted(value: string, scope: Scope, clause: Clause): Expr {
    const column = scope.resolveColumn(null, value);
    if (column) return column;
    if (clause !== 'select' && clause !== 'on') {
      const index = scope.selectAlias(value);
      if (index >= 0) return scope.selectItems[index].expr;
    }
    return { kind: 'literal', type: 'text', value, raw: `"${value}"` };
  }

  private column(node: Raw, scope: Scope, clause: Clause): Expr {
    const name = columnName(node);
    const qualifier = identifier(node.table);
    const column = scope.resolveColumn(qualifier, name);
    if (column) return column;
    if (qualifier === null && clause !== 'select' && clause !== 'on') {
      // WHERE/GROUP BY/HAVING may name a result alias when no column has that name.
      const index = scope.selectAlias(name);
      if (index >= 0) return scope.selectItems[index].expr;
    }
    if (qualifier !== null && !scope.hasQualifier(qualifier))
      throw new NameError(`no such column: ${qualifier}.${name}`);
    throw new NameError(`no such column: ${qualifier ? `${qualifier}.` : ''}${name}`);
  }

  private binary(node: Raw, scope: Scope, clause: Clause): Expr {
    const operator = String(node.operator).toUpperCase();
    const left = (): Expr => this.expr(node.left, scope, clause);
    switch (operator) {
      case 'IN':
      case 'NOT IN': {
        const not = operator === 'NOT IN';
        const values: Raw[] = node.right?.type === 'expr_list' ? node.right.value : [node.right];
        if (values.length === 1 && values[0]?.ast) {
          return { kind: 'in', expr: left(), not, list: null, subquery: this.subquery(values[0].ast, scope) };
        }
        return { kind: 'in', expr: left(), not, list: values.map((v) => this.expr(v, scope, clause)), subquery: null };
      }
      case 'BETWEEN':
      case 'NOT BETWEEN': {
        const [low, high] = node.right.value;
        return {
          kind: 'between',
          expr: left(),
          not: operator === 'NOT BETWEEN',
          low: this.expr(low, scope, clause),
          high: this.expr(high, scope, clause),
        };
      }
      case 'LIKE':
      case 'NOT LIKE':
      case 'GLOB':
      case 'NOT GLOB': {
        if (node.right?.type === 'escape' || node.escape)
          throw new SyntaxShapeError('LIKE ... ESCAPE is not supported');
        return {
          kind: 'like',
          op: operator.endsWith('GLOB') ? 'GLOB' : 'LIKE',
          not: operator.startsWith('NOT'),
          expr: left(),
          pattern: this.expr(node.right, scope, clause),
        };
      }
      case 'IS':
      case 'IS NOT':
        if (node.right?.type === 'null') return { kind: 'isNull', expr: left(), not: operator === 'IS NOT' };
        break;
    }
    const op = BINARY_OPS[operator];
    if (!op) throw new SyntaxShapeError(`unsupported operator ${operator}`);
    return { kind: 'binary', op, left: left(), right: this.expr(node.right, scope, clause) };
  }

  private unary(node: Raw, scope: Scope, clause: Clause): Expr {
    const operator = String(node.operator).toUpperCase();
    if (operator === 'NOT EXISTS' || operator === 'EXISTS') {
      const ast = node.expr?.ast ?? node.expr?.value?.[0]?.ast;
      if (!ast) throw new SyntaxShapeError('EXISTS without a subquery');
      return { kind: 'exists', not: operator === 'NOT EXISTS', query: this.subquery(ast, scope) };
    }
    const operand = this.expr(node.expr, scope, clause);
    if (operator === '-' && operand.kind === 'literal' && typeof operand.value === 'number') {
      return { ...operand, value: -operand.value, raw: `-${operand.raw}` };
    }
    if (operator === '-' || operator === '+') return { kind: 'unary', op: operator, operand };
    if (operator === 'NOT' || operator === '!') return { kind: 'unary', op: 'NOT', operand };
    throw new SyntaxShapeError(`unsupported unary operator ${operator}`);
  }

  private aggregate(name: string, node: Raw, scope: Scope, clause: Clause): Expr {
    if (node.over) return this.window(name, node, scope, clause);
    const argNode = node.args?.expr;
    const star = !argNode || argNode.type === 'star' || (argNode.type === 'column_ref' && columnName(argNode) === '*');
    const distinct = String(node.args?.distinct ?? '').toUpperCase() === 'DISTINCT';
    const extraArgs: Expr[] = node.args?.separator
      ? [this.expr(node.args.separator.value ?? node.args.separator, scope, clause)]
      : [];
    return {
      kind: 'aggregate',
      name: name as AggregateName,
      distinct,
      star,
      arg: star ? null : this.expr(argNode, scope, clause),
      extraArgs,
    };
  }

  private func(node: Raw, scope: Scope, clause: Clause): Expr {
    let name = functionName(node).toUpperCase();
    const distinct = name.endsWith(DISTINCT_MARK);
    if (distinct) name = name.slice(0, -DISTINCT_MARK.length);
    const rawArgs: Raw[] = node.args?.value ?? (node.args ? [node.args] : []);
    if (node.over) return this.window(name, node, scope, clause);
    if (name === 'EXISTS' && rawArgs[0]?.ast)
      return { kind: 'exists', not: false, query: this.subquery(rawArgs[0].ast, scope) };
    const args = rawArgs.map((a) => this.expr(a, scope, clause));
    if (AGGREGATES.has(name) && (args.length === 1 || name === 'GROUP_CONCAT' || name === 'MIN' || name === 'MAX')) {
      // MIN/MAX with several arguments are SQLite's scalar functions; with one, aggregates.
      if (args.length === 1 || name === 'GROUP_CONCAT') {
        return {
          kind: 'aggregate',
          name: name as AggregateName,
          distinct,
          star: false,
          arg: args[0] ?? null,
          extraArgs: args.slice(1),
        };
      }
    }
    if (name === 'IIF' && args.length === 3) {
      return { kind: 'case', whens: [{ when: args[0], then: args[1] }], else: args[2] };
    }
    return { kind: 'function', name, args };
  }

  /**
   * `f(args) OVER (PARTITION BY ... ORDER BY ... frame)`, or `OVER w` for a window the
   * SELECT's WINDOW clause names. SQLite allows window functions only in the SELECT list
   * and ORDER BY.
   */
  private window(name: string, node: Raw, scope: Scope, clause: Clause): WindowExpr {
    if (clause !== 'select' && clause !== 'order') throw new NameError(`misuse of window function ${name}()`);
    if (node.consider_nulls) throw new SyntaxShapeError(`${String(node.consider_nulls)} is not supported`);
    const spec = this.windowSpecification(node.over, scope);
    const expr = (e: Raw): Expr => this.expr(e, scope, clause);
    const argNode = node.args?.expr;
    const star = argNode?.type === 'star' || (argNode?.type === 'column_ref' && columnName(argNode) === '*');
    const args: Raw[] = argNode ? (star ? [] : [argNode]) : (node.args?.value ?? []);
    const orderBy = ((spec.orderby as Raw[] | null) ?? []).map((item): WindowOrderItem => ({
      expr: expr(item.expr),
      direction: String(item.type ?? 'ASC').toUpperCase() === 'DESC' ? 'desc' : 'asc',
      nulls: item.nulls ? (/FIRST/i.test(String(item.nulls)) ? 'first' : 'last') : null,
    }));
    return {
      kind: 'window',
      name,
      args: args.map(expr),
      star,
      distinct: String(node.args?.distinct ?? '').toUpperCase() === 'DISTINCT',
      partitionBy: ((spec.partitionby as Raw[] | null) ?? []).map((p) => expr(p.expr)),
      orderBy,
      frame: frameText(spec.window_frame_clause),
    };
  }

  /** The `window_specification` of an OVER clause, a named window looked up in the SELECT's WINDOW clause. */
  private windowSpecification(over: Raw, scope: Scope): Raw {
    // The sqlite grammar (which knows only `OVER (PARTITION BY ...)`) gives the specification itself.
    if (over && over.type === undefined && 'partitionby' in over) return over;
    let spec: Raw = over?.as_window_specification;
    if (typeof spec === 'string') {
      const named = scope.windows.get(spec.toLowerCase());
      if (named === undefined) throw new NameError(`no such window: ${spec}`);
      spec = named;
    }
    const window = spec?.window_specification;
    if (!window) throw new SyntaxShapeError(`unsupported OVER clause ${JSON.stringify(over).slice(0, 200)}`);
    if (window.name) throw new SyntaxShapeError('a window based on another window is not supported');
    return window;
  }

  private caseExpr(node: Raw, scope: Scope, clause: Clause): Expr {
    const operand = node.expr ? this.expr(node.expr, scope, clause) : null;
    const whens: { when: Expr; then: Expr }[] = [];
    let otherwise: Expr | null = null;
    for (const arm of node.args as Raw[]) {
      const result = this.expr(arm.result, scope, clause);
      if (arm.type === 'else') {
        otherwise = result;
        continue;
      }
      const cond = this.expr(arm.cond, scope, clause);
      whens.push({ when: operand ? { kind: 'binary', op: '=', left: operand, right: cond } : cond, then: result });
    }
    return { kind: 'case', whens, else: otherwise };
  }

  private cast(node: Raw, scope: Scope, clause: Clause): CastExpr {
    const target = node.target?.[0] ?? node.target;
    const typeName = String(target?.dataType ?? '').toUpperCase();
    return { kind: 'cast', expr: this.expr(node.expr, scope, clause), to: castAffinity(typeName), typeName };
  }

  private text(node: Raw): string {
    try {
      return this.parser.exprToSQL(node, { database: this.dialect });
    } catch {
      return 'expr';
    }
  }
}

// ---- helpers ------------------------------------------------------------------------------

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function columnName(node: Raw): string {
  const c = node.column;
  if (typeof c === 'string') return c;
  if (c?.expr?.value !== undefined) return String(c.expr.value);
  throw new SyntaxShapeError(`unsupported column reference ${JSON.stringify(node).slice(0, 80)}`);
}

/**
 * A name as the grammars give it: a plain string, or (mysql's qualifiers, every grammar's
 * USING list) a quoted-identifier node `{ type: 'backticks_quote_string', value }`.
 * Null when absent; any other shape is one we do not understand.
 */
function identifier(value: Raw): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value.value === 'string') return value.value;
  throw new SyntaxShapeError(`unsupported identifier ${JSON.stringify(value).slice(0, 80)}`);
}

/** A name that could be a result alias: an unqualified column or a double-quoted token. */
function bareName(node: Raw): string | null {
  if (node?.type === 'column_ref' && !node.table) return columnName(node);
  if (node?.type === 'double_quote_string') return String(node.value);
  return null;
}

function ordinalOf(node: Raw, count: number): number | null {
  if (node?.type !== 'number' || typeof node.value !== 'number' || !Number.isInteger(node.value)) return null;
  if (node.value < 1 || node.value > count) throw new NameError(`term out of range: ${node.value}`);
  return node.value - 1;
}

function numberLiteral(value: number | string): LiteralExpr {
  const raw = String(value);
  const isReal = /[.eE]/.test(raw) && !/^0x/i.test(raw);
  return { kind: 'literal', type: isReal ? 'real' : 'integer', value: Number(raw), raw };
}

function textLiteral(value: string): LiteralExpr {
  return { kind: 'literal', type: 'text', value, raw: `'${value.replace(/'/g, "''")}'` };
}

function joinType(join: string | undefined): JoinType {
  const j = String(join ?? '').toUpperCase();
  if (j === '' || j.startsWith('CROSS')) return 'cross';
  if (j.startsWith('LEFT')) return 'left';
  if (j.startsWith('RIGHT')) return 'right';
  if (j.startsWith('FULL')) return 'full';
  return 'inner';
}

/** `a UNION b EXCEPT c` chains through `_next`; ORDER BY/LIMIT of the compound sit on the last member. */
function compoundParts(raw: Raw): { members: Raw[]; ops: SetOperator[]; tail: { orderby: Raw; limit: Raw } } {
  const chain: Raw[] = [];
  const ops: SetOperator[] = [];
  for (let node: Raw = raw; node; node = node._next) {
    chain.push(node);
    if (node._next) ops.push(setOperator(node.set_op));
  }
  const last = chain[chain.length - 1];
  const members = chain.map((m, i) =>
    i === chain.length - 1 ? { ...m, orderby: null, limit: null, _next: null } : { ...m, _next: null },
  );
  return { members, ops, tail: { orderby: last.orderby, limit: last.limit } };
}

function setOperator(op: string): SetOperator {
  const o = String(op).toLowerCase().replace(/\s+/g, ' ');
  if (o === 'union' || o === 'union all' || o === 'intersect' || o === 'except') return o;
  throw new SyntaxShapeError(`unsupported set operator ${op}`);
}

/** SQLite's type-name affinity rules (datatype3.html, 3.1). */
export function castAffinity(typeName: string): CastExpr['to'] {
  if (typeName.includes('INT')) return 'integer';
  if (/CHAR|CLOB|TEXT/.test(typeName)) return 'text';
  if (typeName === '' || typeName.includes('BLOB')) return 'blob';
  if (/REAL|FLOA|DOUB/.test(typeName)) return 'real';
  return 'numeric';
}

/**
 * A window frame as SQLite reads it: `ROWS|RANGE|GROUPS <bound>` or `... BETWEEN <bound>
 * AND <bound>`, each bound `UNBOUNDED PRECEDING`, `n PRECEDING`, `CURRENT ROW`, ...
 */
function frameText(node: Raw): string | null {
  if (!node) return null;
  const bound = (b: Raw): string => {
    const text = String(b?.value ?? '')
      .toUpperCase()
      .replace(/\s+/g, ' ')
      .trim();
    if (!/^(UNBOUNDED (PRECEDING|FOLLOWING)|CURRENT ROW|\d+ (PRECEDING|FOLLOWING))$/.test(text))
      throw new SyntaxShapeError(`unsupported window frame bound ${JSON.stringify(b).slice(0, 80)}`);
    return text;
  };
  if (node.type === 'binary_expr' && String(node.operator).toUpperCase() === 'BETWEEN') {
    const [low, high] = (node.right?.value as Raw[] | undefined) ?? [];
    return `${frameUnits(node.left?.value)} BETWEEN ${bound(low)} AND ${bound(high)}`;
  }
  return `${frameUnits(node.type)} ${bound(node.expr)}`;
}

function frameUnits(units: unknown): string {
  const text = String(units).toUpperCase();
  if (text !== 'ROWS' && text !== 'RANGE' && text !== 'GROUPS')
    throw new SyntaxShapeError(`unsupported window frame ${String(units)}`);
  return text;
}

/** `WITH x(a, b) AS (...)`: the query with its result columns named `names`. */
function withColumnNames(query: Query, names: string[], table: string): Query {
  if (query.kind === 'set') return { ...query, left: withColumnNames(query.left, names, table) };
  if (query.columns.length !== names.length)
    throw new NameError(`table ${table} has ${query.columns.length} values for ${names.length} columns`);
  return { ...query, columns: query.columns.map((c, i) => ({ ...c, name: names[i] })) };
}

export function sameExpr(a: Expr, b: Expr): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
