import type { SqlParam } from '../sql/executor.js';

/**
 * SQL fragments: text with `?` placeholders, their parameters in textual order, and the
 * common table expressions (by index) the text reads. Concatenating fragments keeps the
 * three in step, so literals are never inlined and dependencies never forgotten.
 */
export interface Frag {
  sql: string;
  params: SqlParam[];
  deps: number[];
}

export function raw(sql: string): Frag {
  return { sql, params: [], deps: [] };
}

export function param(value: SqlParam): Frag {
  return { sql: '?', params: [value], deps: [] };
}

/** Double-quoted identifier (embedded quotes doubled): identifiers are never raw text. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function ident(name: string): Frag {
  return raw(quoteIdent(name));
}

/** Name of the i-th common table expression; `__` keeps it clear of any table name. */
export function cteName(index: number): string {
  return `"__nl2api_c${index}"`;
}

export function cte(index: number): Frag {
  return { sql: cteName(index), params: [], deps: [index] };
}

/** Tagged template: `sql\`SELECT ${a} FROM ${b}\`` with every interpolation a Frag. */
export function sql(strings: TemplateStringsArray, ...parts: Frag[]): Frag {
  let text = strings[0];
  const params: SqlParam[] = [];
  const deps = new Set<number>();
  parts.forEach((part, i) => {
    text += part.sql + strings[i + 1];
    params.push(...part.params);
    part.deps.forEach((d) => deps.add(d));
  });
  return { sql: text, params, deps: [...deps] };
}

export function join(parts: readonly Frag[], separator: string): Frag {
  const params: SqlParam[] = [];
  const deps = new Set<number>();
  for (const part of parts) {
    params.push(...part.params);
    part.deps.forEach((d) => deps.add(d));
  }
  return { sql: parts.map((p) => p.sql).join(separator), params, deps: [...deps] };
}
