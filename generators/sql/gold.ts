import nodeSqlParser from 'node-sql-parser';
import type { DatabaseInfo, GoldResult, Instance } from '../../pipeline/model.js';
import { accept, reject, type Outcome } from '../../pipeline/outcome.js';
import { SqlExecutionError, SqlTimeoutError, type SqlExecutor } from '../../runtime/sql/executor.js';
import { abbreviateSql } from '../../runtime/sql/readonly.js';
import { resolveDoubleQuotedStrings, schemaIdentifiers } from './double-quotes.js';

const { Parser } = nodeSqlParser;
const parser = new Parser();

/**
 * The gold stage: runs an instance's gold SQL read-only, with a timeout, and records what
 * the comparison of later outputs needs (is row order part of the answer? are rows distinct?).
 */
export async function runGold(
  instance: Instance,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<Outcome<GoldResult>> {
  if (!/^(select|with)\b/i.test(stripLeadingNoise(instance.sql))) {
    return reject('gold_error', `not a read-only SELECT: ${abbreviateSql(instance.sql)}`);
  }
  const executedSql = resolveDoubleQuotedStrings(instance.sql, schemaIdentifiers(db, instance.sql));
  try {
    const result = await executor.run({ dbPath: db.path, sql: executedSql, params: [], timeoutMs });
    return accept({ ...result, executedSql, ...resultShape(executedSql) });
  } catch (error) {
    if (error instanceof SqlTimeoutError) return reject('gold_timeout', error.message);
    if (error instanceof SqlExecutionError) return reject('gold_error', error.message);
    throw error;
  }
}

export interface ResultShape {
  /** The top-level query has ORDER BY. */
  ordered: boolean;
  /** The top-level query returns distinct rows: SELECT DISTINCT, or a compound ending in UNION/INTERSECT/EXCEPT. */
  distinct: boolean;
}

interface SelectNode {
  type?: string;
  distinct?: { type?: string } | string | null;
  orderby?: unknown[] | null;
  set_op?: string | null;
  _next?: SelectNode | null;
}

export function resultShape(sql: string): ResultShape {
  let ast: SelectNode | SelectNode[];
  try {
    ast = parser.astify(sql, { database: 'sqlite' }) as SelectNode | SelectNode[];
  } catch {
    return shapeFromTokens(sql);
  }
  const top = Array.isArray(ast) ? ast[0] : ast;
  if (!top || top.type !== 'select') return shapeFromTokens(sql);
  // A compound's ORDER BY sits on its last SELECT; its last operator decides duplicates.
  const chain: SelectNode[] = [top];
  while (chain[chain.length - 1]._next) chain.push(chain[chain.length - 1]._next!);
  const lastOperator = chain.length > 1 ? (chain[chain.length - 2].set_op ?? '').toLowerCase() : undefined;
  return {
    ordered: chain.some((select) => (select.orderby?.length ?? 0) > 0),
    distinct: lastOperator === undefined ? isDistinct(top.distinct) : !/\ball\b/.test(lastOperator),
  };
}

function isDistinct(distinct: SelectNode['distinct']): boolean {
  const keyword = typeof distinct === 'string' ? distinct : distinct?.type;
  return keyword?.toUpperCase() === 'DISTINCT';
}

/**
 * For SQL the parser does not know: only words outside parentheses, quotes and comments
 * belong to the top-level query. ORDER BY anywhere at that level counts as ordered (the
 * stricter comparison); DISTINCT counts only right after the first top-level SELECT.
 */
export function shapeFromTokens(sql: string): ResultShape {
  const words = topLevelWords(sql);
  const ordered = words.some((word, i) => word === 'order' && words[i + 1] === 'by');
  const select = words.indexOf('select');
  const compound = words.some((word) => word === 'union' || word === 'intersect' || word === 'except');
  return { ordered, distinct: !compound && select >= 0 && words[select + 1] === 'distinct' };
}

function topLevelWords(sql: string): string[] {
  const text = sql
    .replace(/--[^\n]*|\/\*[\s\S]*?(\*\/|$)/g, ' ')
    .replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]/g, ' x ');
  let depth = 0;
  let outside = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    outside += depth === 0 && ch !== ')' ? ch : ' ';
    if (ch === ')') depth = Math.max(0, depth - 1);
  }
  return outside.toLowerCase().match(/[a-z_][a-z0-9_]*/g) ?? [];
}

/** Comments, whitespace and opening parentheses before the first keyword. */
function stripLeadingNoise(sql: string): string {
  return sql.replace(/^(?:\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/|\()*/, '');
}
