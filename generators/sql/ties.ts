import { isWord, significant, tokenize, topLevel, unquote, type Token } from '../../runtime/sql/lexer.js';

/**
 * Ties under `ORDER BY … LIMIT`: when rows tie on the sort keys, SQL leaves their order
 * open, so a cut through them (or the order inside the window) may come out either way.
 * To tell which answers are acceptable, the query is asked again without its LIMIT and
 * with its sort keys as extra columns (a *tie probe*): the rows of each window position's
 * tie group are then known. For SELECT DISTINCT the probe also drops DISTINCT: a distinct
 * row may come from rows with different sort keys, and which of them orders it is SQLite's
 * choice. Read off the top-level tokens, like gold.ts's result shape; a query this cannot
 * rewrite faithfully (a compound; a LIMIT that is not a literal) has no probe.
 */

export interface TieProbe {
  /** The query without LIMIT/OFFSET, its ORDER BY keys appended to its columns. */
  sql: string;
  /** The probe's last `keys` columns are the sort keys. */
  keys: number;
  /** Infinity for a query without LIMIT (the window is every row). */
  limit: number;
  offset: number;
  /** The query is SELECT DISTINCT (the probe is not). */
  distinct: boolean;
}

export function tieProbe(sql: string): TieProbe | null {
  const tokens = tokenize(sql);
  const top = topLevel(tokens);
  const at = (word: string, from = 0) => top.findIndex((i, k) => k >= from && isWord(tokens[i], word));
  if (top.some((i) => isWord(tokens[i], 'UNION', 'INTERSECT', 'EXCEPT'))) return null;
  const select = at('SELECT');
  const from = at('FROM', select + 1);
  const order = top.findIndex((i, k) => isWord(tokens[i], 'ORDER') && isWord(tokens[top[k + 1]], 'BY'));
  if (select < 0 || from < 0 || order < 0 || order < from) return null;
  // Without LIMIT the window is every row: rows tied on the sort keys may come in any order.
  const found = at('LIMIT', order);
  const limit = found < 0 ? top.length : found;
  const window = found < 0 ? { limit: Infinity, offset: 0 } : limitOf(tokens, top.slice(limit + 1));
  if (!window) return null;
  const distinct = isWord(tokens[top[select + 1]], 'DISTINCT');
  const items = splitAtCommas(
    tokens,
    top.slice(select + 1, from),
    top,
    isWord(tokens[top[select + 1]], 'ALL', 'DISTINCT'),
  );
  const keys = splitAtCommas(tokens, top.slice(order + 2, limit), top, false).map((key) =>
    sortKeyExpression(tokens, key, items),
  );
  if (keys.some((key) => key === null)) return null;
  const text = (first: number, last: number) =>
    tokens
      .slice(first, last)
      .map((t, i) => (distinct && first + i === top[select + 1] ? '' : t.text))
      .join('');
  const probe = `${text(0, top[from])}, ${keys.join(', ')} ${text(top[from], top[limit] ?? tokens.length)}`;
  return { sql: probe, keys: keys.length, ...window, distinct };
}

/** `LIMIT n`, `LIMIT n OFFSET m` or `LIMIT m, n`, all integer literals. */
function limitOf(tokens: readonly Token[], rest: number[]): { limit: number; offset: number } | null {
  const texts = rest.map((i) => tokens[i].text);
  const integer = (text: string | undefined) => (text !== undefined && /^\d+$/.test(text) ? Number(text) : null);
  if (texts.length === 1) {
    const limit = integer(texts[0]);
    return limit === null ? null : { limit, offset: 0 };
  }
  if (texts.length === 3 && (texts[1] === ',' || texts[1].toUpperCase() === 'OFFSET')) {
    const [a, b] = [integer(texts[0]), integer(texts[2])];
    if (a === null || b === null) return null;
    return texts[1] === ',' ? { limit: b, offset: a } : { limit: a, offset: b };
  }
  return null;
}

/** The token ranges [first, last) of a top-level list between two clauses, split at its commas. */
function splitAtCommas(
  tokens: readonly Token[],
  list: number[],
  top: number[],
  skipFirst: boolean,
): [number, number][] {
  if (list.length === 0) return [];
  const ranges: [number, number][] = [];
  let first = list[skipFirst ? 1 : 0];
  for (const i of list) {
    if (tokens[i].text === ',') {
      ranges.push([first, i]);
      first = i + 1;
    }
  }
  const end = top[top.indexOf(list[list.length - 1]) + 1] ?? tokens.length;
  ranges.push([first, end]);
  return ranges;
}

/**
 * A sort key as an expression the SELECT list can hold: without ASC/DESC/NULLS …; an
 * ordinal is the column it numbers; a name that is a column alias is the aliased
 * expression (aliases are not visible inside the SELECT list).
 */
function sortKeyExpression(
  tokens: readonly Token[],
  [first, last]: [number, number],
  items: [number, number][],
): string | null {
  const words = significant(tokens.slice(first, last));
  while (words.length > 0 && isWord(words[words.length - 1], 'ASC', 'DESC', 'FIRST', 'LAST', 'NULLS')) words.pop();
  if (words.length === 0) return null;
  const key = words.map((t) => t.text).join(' ');
  if (words.length === 1 && /^\d+$/.test(key)) {
    const item = items[Number(key) - 1];
    return item ? expressionOf(tokens, item) : null;
  }
  if (words.length === 1) {
    const aliased = items.find((item) => aliasOf(tokens, item)?.toLowerCase() === unquote(words[0]).toLowerCase());
    if (aliased) return expressionOf(tokens, aliased);
  }
  return key;
}

function aliasOf(tokens: readonly Token[], [first, last]: [number, number]): string | null {
  const words = significant(tokens.slice(first, last));
  return words.length >= 3 && isWord(words[words.length - 2], 'AS') ? unquote(words[words.length - 1]) : null;
}

function expressionOf(tokens: readonly Token[], [first, last]: [number, number]): string {
  const words = significant(tokens.slice(first, last));
  const body = aliasOf(tokens, [first, last]) === null ? words : words.slice(0, -2);
  return body.map((t) => t.text).join(' ');
}
