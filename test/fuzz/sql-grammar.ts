import { mulberry32 } from '../../core/random.js';
import { significant, tokenize } from '../../runtime/sql/lexer.js';

/**
 * A seeded, deterministic generator of random SQL over a real schema, for fuzzing every
 * stage: valid statements from the SQL the pipeline supports (joins along foreign keys,
 * WHERE with AND/OR/NOT/IN/BETWEEN/LIKE/IS NULL, GROUP BY/HAVING, ORDER BY/LIMIT,
 * aggregates, CASE/IIF, CAST, arithmetic, subqueries, compounds, date functions, every
 * identifier quoting, literals taken from the data), and invalid ones made from them
 * (truncated, tokens dropped, swapped or doubled, unbalanced parentheses, unknown names,
 * unterminated quotes), plus non-SELECT statements and garbage. Pure: the same seed and
 * schema give the same statements.
 */

export type ColumnKind = 'integer' | 'real' | 'text' | 'date';

export interface FuzzColumn {
  name: string;
  kind: ColumnKind;
  /** A few values of the column, so that literals meet real rows. */
  samples: (string | number)[];
}

export interface FuzzTable {
  name: string;
  columns: FuzzColumn[];
}

/** A foreign key: `from.column` references `to.column`. */
export interface FuzzLink {
  from: { table: string; column: string };
  to: { table: string; column: string };
}

export interface FuzzSchema {
  tables: FuzzTable[];
  links: FuzzLink[];
}

export interface FuzzStatement {
  sql: string;
  /** How it was made: `valid`, or the mutation / kind of invalid input. */
  kind: string;
}

/** Seeded (mulberry32): the same statements on every platform. */
class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}

/** `count` statements; `validShare` of them valid, the rest invalid in one of many ways. */
export function generateStatements(schema: FuzzSchema, seed: number, count: number, validShare = 0.7): FuzzStatement[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () =>
    rng.chance(validShare) ? { sql: validStatement(rng, schema), kind: 'valid' } : invalidStatement(rng, schema),
  );
}

function validStatement(rng: Rng, schema: FuzzSchema): string {
  const g = new Generator(rng, schema);
  return rng.chance(0.1) ? g.compound() : g.select({ depth: 0, outer: [] });
}

// ---- valid statements ----------------------------------------------------------------------

interface InScope {
  /** What expressions use: the alias, else the table name. */
  name: string;
  table: FuzzTable;
}

interface SelectOptions {
  depth: number;
  /** Enclosing queries' FROM items (correlated references). */
  outer: InScope[];
  /** Exactly these many result columns, of this kind (IN subqueries, compounds). */
  columns?: { count: number; kind?: ColumnKind };
  /** Aggregate-only result (a scalar subquery). */
  scalar?: boolean;
}

type Quoting = 'bare' | 'double' | 'backtick' | 'bracket';

const COMPARISONS = ['=', '!=', '<>', '<', '<=', '>', '>='];
const DATE_FORMATS = ['%Y', '%m', '%Y-%m', '%d'];

class Generator {
  /** One quoting style for the whole statement, as datasets write them (BIRD: backticks or double quotes). */
  private readonly quoting: Quoting;
  private readonly upper: boolean;

  constructor(
    private readonly rng: Rng,
    private readonly schema: FuzzSchema,
  ) {
    this.quoting = rng.pick<Quoting>(['bare', 'bare', 'double', 'backtick', 'backtick', 'bracket']);
    this.upper = rng.chance(0.8);
  }

  private kw(word: string): string {
    return this.upper ? word : word.toLowerCase();
  }

  /** A name quoted as the statement quotes; names that need quotes always get them. */
  private ident(name: string): string {
    const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
    const style = this.quoting === 'bare' && !plain ? 'double' : this.quoting;
    if (style === 'bare') return name;
    if (style === 'double') return `"${name.replace(/"/g, '""')}"`;
    if (style === 'backtick') return `\`${name.replace(/`/g, '``')}\``;
    return `[${name}]`;
  }

  compound(): string {
    const kind = this.rng.pick<ColumnKind>(['integer', 'text']);
    const op = this.rng.pick(['UNION', 'UNION ALL', 'INTERSECT', 'EXCEPT']);
    const member = () => this.select({ depth: 1, outer: [], columns: { count: 1, kind } });
    const tail = this.rng.chance(0.4) ? ` ${this.kw('ORDER BY')} 1 ${this.kw('LIMIT')} ${1 + this.rng.int(10)}` : '';
    return `${member()} ${this.kw(op)} ${member()}${tail}`;
  }

  select(options: SelectOptions): string {
    const { rng } = this;
    const scope: InScope[] = [];
    const from = this.from(scope, options);
    const all = [...scope, ...options.outer];
    const grouped = !options.scalar && !options.columns && rng.chance(0.25);
    const aggregated = options.scalar || (!grouped && !options.columns && rng.chance(0.2));
    const keys = grouped ? Array.from({ length: 1 + rng.int(2) }, () => this.columnRef(scope)) : [];

    const items: string[] = [];
    if (options.columns) {
      for (let i = 0; i < options.columns.count; i++)
        items.push(this.typedColumn(scope, options.columns.kind) ?? this.columnRef(scope));
    } else if (aggregated) {
      items.push(this.aggregate(scope));
    } else {
      items.push(...keys);
      const extra = grouped ? 1 : 1 + rng.int(3);
      for (let i = 0; i < extra; i++) items.push(grouped ? this.aggregate(scope) : this.scalar(scope, options.depth));
      if (!grouped && rng.chance(0.12)) items.push(this.window(scope));
      if (!grouped && rng.chance(0.05))
        items.splice(0, items.length, rng.chance(0.5) ? '*' : `${this.ident(scope[0].name)}.*`);
    }
    const aliased = items.map((item, i) =>
      item !== '*' && !item.endsWith('.*') && rng.chance(0.2)
        ? `${item} ${this.kw('AS')} ${this.ident(`c${i}`)}`
        : item,
    );

    let sql = `${this.kw('SELECT')} ${!aggregated && rng.chance(0.15) ? `${this.kw('DISTINCT')} ` : ''}${aliased.join(', ')} ${this.kw('FROM')} ${from}`;
    if (rng.chance(0.6)) sql += ` ${this.kw('WHERE')} ${this.predicate(all, options.depth, 0)}`;
    if (grouped) {
      sql += ` ${this.kw('GROUP BY')} ${keys.join(', ')}`;
      if (rng.chance(0.3))
        sql += ` ${this.kw('HAVING')} ${this.aggregate(scope)} ${rng.pick(COMPARISONS)} ${rng.int(5)}`;
    }
    if (!options.columns && !options.scalar && rng.chance(0.4)) sql += ` ${this.orderBy(items)}`;
    if (!options.scalar && rng.chance(0.35)) {
      sql += ` ${this.kw('LIMIT')} ${1 + rng.int(20)}${rng.chance(0.2) ? ` ${this.kw('OFFSET')} ${rng.int(5)}` : ''}`;
    }
    return sql;
  }

  /** A base table, then up to two joins along foreign keys; now and then a derived table. */
  private from(scope: InScope[], options: SelectOptions): string {
    const { rng } = this;
    const alias = (table: FuzzTable) => (rng.chance(0.6) ? `T${options.depth}${scope.length + 1}` : table.name);
    const add = (table: FuzzTable): string => {
      const name = alias(table);
      scope.push({ name, table });
      return name === table.name
        ? this.ident(table.name)
        : `${this.ident(table.name)} ${this.kw('AS')} ${this.ident(name)}`;
    };
    if (options.depth < 2 && !options.columns && rng.chance(0.05)) return this.derived(scope, options.depth);
    let sql = add(rng.pick(this.schema.tables));
    for (let joins = rng.int(3); joins > 0; joins--) {
      const link = this.joinable(scope);
      if (!link) break;
      const [known, next] = link.known;
      const joined = this.schema.tables.find((t) => t.name === next.table)!;
      const type = rng.pick(['INNER JOIN', 'INNER JOIN', 'JOIN', 'LEFT JOIN']);
      const right = add(joined);
      const left = scope.find((s) => s.table.name === known.table)!;
      sql += ` ${this.kw(type)} ${right} ${this.kw('ON')} ${this.qualified(left.name, known.column)} = ${this.qualified(scope[scope.length - 1].name, next.column)}`;
    }
    return sql;
  }

  /** A foreign key from a table in scope to one not yet joined, oriented (in scope, new). */
  private joinable(scope: InScope[]): { known: [FuzzLink['from'], FuzzLink['to']] } | null {
    const inScope = new Set(scope.map((s) => s.table.name));
    const options = this.schema.links.flatMap((link): [FuzzLink['from'], FuzzLink['to']][] => {
      if (inScope.has(link.from.table) && !inScope.has(link.to.table)) return [[link.from, link.to]];
      if (inScope.has(link.to.table) && !inScope.has(link.from.table)) return [[link.to, link.from]];
      return [];
    });
    return options.length ? { known: this.rng.pick(options) } : null;
  }

  /** `(SELECT a AS d0, b AS d1 FROM t WHERE ...) AS sub`: a derived table whose columns the outer query knows. */
  private derived(scope: InScope[], depth: number): string {
    const { rng } = this;
    const inner: InScope[] = [{ name: `T${depth + 1}1`, table: rng.pick(this.schema.tables) }];
    const picked = Array.from({ length: 1 + rng.int(2) }, () => this.column(inner)!);
    const where = rng.chance(0.5) ? ` ${this.kw('WHERE')} ${this.predicate(inner, depth + 1, 1)}` : '';
    const list = picked.map((p, i) => `${p.ref} ${this.kw('AS')} ${this.ident(`d${i}`)}`).join(', ');
    const name = `sub${depth}`;
    scope.push({ name, table: { name, columns: picked.map((p, i) => ({ ...p.column, name: `d${i}` })) } });
    const table = `${this.ident(inner[0].table.name)} ${this.kw('AS')} ${this.ident(inner[0].name)}`;
    return `(${this.kw('SELECT')} ${list} ${this.kw('FROM')} ${table}${where}) ${this.kw('AS')} ${this.ident(name)}`;
  }

  private qualified(source: string, column: string): string {
    return `${this.ident(source)}.${this.ident(column)}`;
  }

  private column(scope: InScope[], kinds?: readonly ColumnKind[]): { ref: string; column: FuzzColumn } | null {
    const candidates = scope.flatMap((s) =>
      s.table.columns.filter((c) => !kinds || kinds.includes(c.kind)).map((c) => ({ s, c })),
    );
    if (candidates.length === 0) return null;
    const { s, c } = this.rng.pick(candidates);
    // Qualified when several items are in scope (no ambiguity), and now and then anyway.
    const qualify = scope.length > 1 || this.rng.chance(0.3);
    return { ref: qualify ? this.qualified(s.name, c.name) : this.ident(c.name), column: c };
  }

  private columnRef(scope: InScope[]): string {
    return this.column(scope)!.ref;
  }

  private typedColumn(scope: InScope[], kind: ColumnKind | undefined): string | null {
    const kinds: ColumnKind[] | undefined =
      kind === 'integer' ? ['integer', 'real'] : kind ? ['text', 'date'] : undefined;
    return this.column(scope, kinds)?.ref ?? null;
  }

  private literalOf(column: FuzzColumn): string {
    const value = column.samples.length ? this.rng.pick(column.samples) : column.kind === 'text' ? 'x' : 1;
    return typeof value === 'number' ? String(value) : `'${value.replace(/'/g, "''")}'`;
  }

  private aggregate(scope: InScope[]): string {
    const { rng } = this;
    const numeric = this.column(scope, ['integer', 'real']);
    const choice = rng.int(6);
    if (choice === 0 || !numeric)
      return rng.chance(0.5)
        ? `${this.kw('COUNT')}(*)`
        : `${this.kw('COUNT')}(${this.kw('DISTINCT')} ${this.columnRef(scope)})`;
    if (choice === 1) return `${this.kw('COUNT')}(${this.columnRef(scope)})`;
    const name = rng.pick(['SUM', 'AVG', 'MIN', 'MAX', 'TOTAL']);
    const arg = rng.chance(0.2)
      ? `${this.kw('CASE WHEN')} ${this.predicate(scope, 2, 1)} ${this.kw('THEN')} 1 ${this.kw('ELSE')} 0 ${this.kw('END')}`
      : numeric.ref;
    const call = `${this.kw(name)}(${arg})`;
    return rng.chance(0.2)
      ? `${this.kw('CAST')}(${call} ${this.kw('AS')} ${this.kw('REAL')}) * 100 / ${this.kw('COUNT')}(*)`
      : call;
  }

  /** A window function over the query's rows: a ranking, an offset or a running aggregate. */
  private window(scope: InScope[]): string {
    const { rng } = this;
    const order = () => `${this.columnRef(scope)}${rng.chance(0.5) ? ` ${this.kw('DESC')}` : ''}`;
    const orderBy = `${this.kw('ORDER BY')} ${order()}${rng.chance(0.4) ? `, ${order()}` : ''}`;
    const partition = rng.chance(0.4) ? `${this.kw('PARTITION BY')} ${this.columnRef(scope)} ` : '';
    const numeric = this.column(scope, ['integer', 'real'])?.ref ?? this.columnRef(scope);
    const frame = rng.pick([
      '',
      '',
      ` ${this.kw('ROWS BETWEEN')} ${1 + rng.int(2)} ${this.kw('PRECEDING AND CURRENT ROW')}`,
      ` ${this.kw('ROWS UNBOUNDED PRECEDING')}`,
    ]);
    switch (rng.int(6)) {
      case 0:
        return `${this.kw(rng.pick(['ROW_NUMBER', 'RANK', 'DENSE_RANK']))}() ${this.kw('OVER')} (${partition}${orderBy})`;
      case 1:
        return `${this.kw('NTILE')}(${2 + rng.int(3)}) ${this.kw('OVER')} (${partition}${orderBy})`;
      case 2:
        return `${this.kw(rng.pick(['LAG', 'LEAD']))}(${this.columnRef(scope)}${rng.chance(0.3) ? `, ${1 + rng.int(2)}` : ''}) ${this.kw('OVER')} (${partition}${orderBy})`;
      case 3:
        return `${this.kw(rng.pick(['SUM', 'AVG', 'MIN', 'MAX', 'COUNT']))}(${numeric}) ${this.kw('OVER')} (${partition}${orderBy}${frame})`;
      case 4:
        return `${this.kw('COUNT')}(*) ${this.kw('OVER')} (${partition.trim()})`;
      default:
        return `${this.kw('SUM')}(${numeric}) ${this.kw('OVER')} (${partition.trim()})`;
    }
  }

  /** A scalar expression of any type. */
  private scalar(scope: InScope[], depth: number): string {
    const { rng } = this;
    switch (rng.int(10)) {
      case 0:
        return this.numeric(scope, depth);
      case 1: {
        const text = this.column(scope, ['text']);
        return text ? `${this.kw(rng.pick(['UPPER', 'LOWER', 'LENGTH', 'TRIM']))}(${text.ref})` : this.columnRef(scope);
      }
      case 2: {
        const text = this.column(scope, ['text', 'date']);
        return text ? `${this.kw('SUBSTR')}(${text.ref}, ${1 + rng.int(3)}, ${1 + rng.int(4)})` : this.columnRef(scope);
      }
      case 3: {
        const date = this.column(scope, ['date']);
        return date ? `${this.kw('STRFTIME')}('${rng.pick(DATE_FORMATS)}', ${date.ref})` : this.columnRef(scope);
      }
      case 4:
        return `${this.kw('CASE WHEN')} ${this.predicate(scope, 2, 1)} ${this.kw('THEN')} ${this.columnRef(scope)} ${this.kw('ELSE')} ${rng.chance(0.5) ? this.kw('NULL') : "'none'"} ${this.kw('END')}`;
      case 5:
        return `${this.kw('IIF')}(${this.predicate(scope, 2, 1)}, 'yes', 'no')`;
      case 6: {
        const text = this.column(scope, ['text']);
        return text ? `${text.ref} || ' ' || ${this.columnRef(scope)}` : this.columnRef(scope);
      }
      default:
        return this.columnRef(scope);
    }
  }

  private numeric(scope: InScope[], depth: number): string {
    const { rng } = this;
    const number = this.column(scope, ['integer', 'real']);
    if (!number) return String(rng.int(100));
    switch (rng.int(7)) {
      case 0:
        return `${number.ref} ${rng.pick(['+', '-', '*', '/', '%'])} ${rng.chance(0.5) ? 1 + rng.int(9) : this.column(scope, ['integer', 'real'])!.ref}`;
      case 1:
        return `${this.kw('CAST')}(${number.ref} ${this.kw('AS')} ${this.kw(rng.pick(['REAL', 'INTEGER', 'TEXT', 'NUMERIC', 'FLOAT']))})`;
      case 2:
        return `${this.kw(rng.pick(['ABS', 'ROUND']))}(${number.ref})`;
      case 3: {
        const dates = [this.column(scope, ['date']), this.column(scope, ['date'])];
        return dates[0] && dates[1]
          ? `${this.kw('JULIANDAY')}(${dates[0].ref}) - ${this.kw('JULIANDAY')}(${dates[1].ref})`
          : number.ref;
      }
      case 4:
        return depth < 2 ? `(${this.select({ depth: depth + 1, outer: scope, scalar: true })})` : number.ref;
      case 5:
        return `-${number.ref}`;
      default:
        return number.ref;
    }
  }

  /** A condition; `nesting` bounds AND/OR/NOT depth. */
  private predicate(scope: InScope[], depth: number, nesting: number): string {
    const { rng } = this;
    if (nesting < 2 && rng.chance(0.35)) {
      const a = this.predicate(scope, depth, nesting + 1);
      const b = this.predicate(scope, depth, nesting + 1);
      const joined = `${a} ${this.kw(rng.pick(['AND', 'OR']))} ${b}`;
      return rng.chance(0.4) ? `(${joined})` : joined;
    }
    if (nesting < 2 && rng.chance(0.08)) return `${this.kw('NOT')} (${this.predicate(scope, depth, nesting + 1)})`;
    const picked = this.column(scope)!;
    const { ref, column } = picked;
    const not = rng.chance(0.15) ? `${this.kw('NOT')} ` : '';
    switch (rng.int(9)) {
      case 0:
        return `${ref} ${not}${this.kw('IN')} (${Array.from({ length: 1 + rng.int(3) }, () => this.literalOf(column)).join(', ')})`;
      case 1: {
        const [low, high] = [this.literalOf(column), this.literalOf(column)];
        return `${ref} ${not}${this.kw('BETWEEN')} ${low} ${this.kw('AND')} ${high}`;
      }
      case 2: {
        const sample = column.samples.find((s) => typeof s === 'string');
        const piece = (sample ?? 'a').slice(0, 1 + rng.int(3)).replace(/'/g, "''");
        return `${ref} ${not}${this.kw('LIKE')} '${rng.pick([`${piece}%`, `%${piece}%`, `%${piece}`])}'`;
      }
      case 3:
        return `${ref} ${this.kw(rng.pick(['IS NULL', 'IS NOT NULL']))}`;
      case 4: {
        if (depth >= 2) return `${ref} = ${this.literalOf(column)}`;
        const kind: ColumnKind = column.kind === 'integer' || column.kind === 'real' ? 'integer' : 'text';
        const inner = this.select({ depth: depth + 1, outer: scope, columns: { count: 1, kind } });
        return rng.chance(0.7) ? `${ref} ${not}${this.kw('IN')} (${inner})` : `${not}${this.kw('EXISTS')} (${inner})`;
      }
      case 5:
        return column.kind === 'date'
          ? `${this.kw('STRFTIME')}('%Y', ${ref}) = '${String(2010 + rng.int(15))}'`
          : `${ref} ${rng.pick(COMPARISONS)} ${this.literalOf(column)}`;
      case 6:
        return `${this.numeric(scope, depth)} ${rng.pick(COMPARISONS)} ${rng.int(100)}`;
      default:
        return `${ref} ${rng.pick(COMPARISONS)} ${this.literalOf(column)}`;
    }
  }

  private orderBy(items: string[]): string {
    const { rng } = this;
    const key = rng.chance(0.3) ? String(1 + rng.int(items.length)) : items[rng.int(items.length)];
    const safe = key === '*' || key.endsWith('.*') ? '1' : key;
    return `${this.kw('ORDER BY')} ${safe}${rng.chance(0.6) ? ` ${this.kw(rng.pick(['ASC', 'DESC']))}` : ''}`;
  }
}

// ---- invalid statements ----------------------------------------------------------------------

const NOISE = [
  '(',
  ')',
  ',',
  '.',
  'SELECT',
  'FROM',
  'WHERE',
  'AND',
  'OR',
  'NOT',
  '*',
  "'",
  '"',
  '`',
  '[',
  ']',
  'NULL',
  '1',
  ';',
  '--',
  '/*',
  'GROUP BY',
  'ORDER',
  'JOIN',
  'ON',
  'AS',
  'IN',
  'LIKE',
  'CASE',
  'END',
  '?',
  ':x',
  '||',
];

const NON_SELECT = [
  (t: string) => `INSERT INTO ${t} VALUES (1)`,
  (t: string) => `UPDATE ${t} SET x = 1`,
  (t: string) => `DELETE FROM ${t}`,
  (t: string) => `DROP TABLE ${t}`,
  () => 'CREATE TABLE fuzz (a INTEGER)',
  (t: string) => `PRAGMA table_info(${t})`,
  () => 'VACUUM',
  () => 'BEGIN TRANSACTION',
  () => "ATTACH DATABASE 'x.sqlite' AS x",
  (t: string) => `EXPLAIN SELECT * FROM ${t}`,
  () => 'VALUES (1, 2), (3, 4)',
  (t: string) => `WITH w AS (SELECT * FROM ${t}) SELECT * FROM w`,
  (t: string) => `SELECT 1; SELECT * FROM ${t}`,
  () => 'SELECT',
  () => ';',
  () => '-- only a comment',
];

const MUTATIONS: Record<string, (rng: Rng, tokens: string[], schema: FuzzSchema) => string[]> = {
  truncated: (rng, tokens) => tokens.slice(0, 1 + rng.int(tokens.length - 1)),
  dropped: (rng, tokens) => tokens.filter((_, i) => i !== rng.int(tokens.length)),
  doubled: (rng, tokens) => {
    const i = rng.int(tokens.length);
    return [...tokens.slice(0, i + 1), tokens[i], ...tokens.slice(i + 1)];
  },
  swapped: (rng, tokens) => {
    const copy = [...tokens];
    const i = rng.int(copy.length - 1);
    [copy[i], copy[i + 1]] = [copy[i + 1], copy[i]];
    return copy;
  },
  noise: (rng, tokens) => {
    const i = rng.int(tokens.length + 1);
    return [...tokens.slice(0, i), rng.pick(NOISE), ...tokens.slice(i)];
  },
  unbalanced: (rng, tokens) => {
    const closing = tokens.map((t, i) => (t === ')' ? i : -1)).filter((i) => i >= 0);
    if (closing.length && rng.chance(0.5)) return tokens.filter((_, i) => i !== rng.pick(closing));
    const i = rng.int(tokens.length + 1);
    return [...tokens.slice(0, i), rng.chance(0.5) ? '(' : ')', ...tokens.slice(i)];
  },
  unknownName: (rng, tokens, schema) => {
    const names = new Set(
      schema.tables.flatMap((t) => [t.name, ...t.columns.map((c) => c.name)]).map((n) => n.toLowerCase()),
    );
    const sites = tokens
      .map((t, i) => (names.has(t.replace(/^["`[]|["`\]]$/g, '').toLowerCase()) ? i : -1))
      .filter((i) => i >= 0);
    if (!sites.length) return tokens;
    const i = rng.pick(sites);
    return tokens.map((t, k) => (k === i ? rng.pick(['no_such_column', '`no such`', '"Nope"', '[nada]', 'T9.x']) : t));
  },
  unterminated: (rng, tokens) => {
    const quoted = tokens.map((t, i) => (/^['"`[]/.test(t) ? i : -1)).filter((i) => i >= 0);
    if (!quoted.length) return [...tokens, "'open"];
    const i = rng.pick(quoted);
    return tokens.map((t, k) => (k === i ? t.slice(0, -1) : t));
  },
};

function invalidStatement(rng: Rng, schema: FuzzSchema): FuzzStatement {
  const roll = rng.int(10);
  if (roll === 0) return { sql: rng.pick(NON_SELECT)(rng.pick(schema.tables).name), kind: 'non_select' };
  if (roll === 1) return { sql: garbage(rng), kind: 'garbage' };
  const base = validStatement(rng, schema);
  const kind = rng.pick(Object.keys(MUTATIONS));
  // Significant tokens joined by spaces: mutations work on meaning, not on whitespace.
  const tokens = significant(tokenize(base)).map((t) => t.text);
  const mutated = MUTATIONS[kind](rng, tokens, schema).join(' ');
  return { sql: mutated.trim() === '' ? base : mutated, kind };
}

function garbage(rng: Rng): string {
  const alphabet = 'SELECTFROMWHERE abcxyz019_*(),.;\'"`[]-+/<>=!|\\\n\t€ü\u0000\u200b';
  return Array.from({ length: 1 + rng.int(60) }, () => alphabet[rng.int(alphabet.length)]).join('');
}
