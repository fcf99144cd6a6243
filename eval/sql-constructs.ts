import { isWord, significant, tokenize, type Token } from '../runtime/sql/lexer.js';

/**
 * The SQL constructs of a gold query, for breaking metrics down by what a question asks:
 * read off its tokens (keywords outside strings and quoted names), so every query gets its
 * tags, whatever a parser makes of it. Sorted, each at most once.
 */

export const SQL_CONSTRUCTS = [
  'aggregate',
  'between',
  'case',
  'cast',
  'compound',
  'date',
  'distinct',
  'group_by',
  'having',
  'in',
  'join',
  'like',
  'limit',
  'or',
  'order_by',
  'subquery',
  'window',
  'with',
] as const;

export type SqlConstruct = (typeof SQL_CONSTRUCTS)[number];

const KEYWORDS: Partial<Record<SqlConstruct, string[]>> = {
  aggregate: ['COUNT', 'SUM', 'AVG', 'MIN', 'MAX', 'TOTAL', 'GROUP_CONCAT'],
  between: ['BETWEEN'],
  case: ['CASE', 'IIF'],
  cast: ['CAST'],
  compound: ['UNION', 'INTERSECT', 'EXCEPT'],
  date: ['STRFTIME', 'DATE', 'DATETIME', 'JULIANDAY', 'TIME'],
  distinct: ['DISTINCT'],
  having: ['HAVING'],
  in: ['IN'],
  join: ['JOIN'],
  like: ['LIKE', 'GLOB'],
  limit: ['LIMIT'],
  or: ['OR'],
  window: ['OVER'],
  with: ['WITH'],
};

/** The constructs each keyword tells: a query's words are looked up once each. */
const CONSTRUCTS_OF = new Map<string, SqlConstruct[]>();
for (const [construct, keywords] of Object.entries(KEYWORDS) as [SqlConstruct, string[]][])
  for (const keyword of keywords) CONSTRUCTS_OF.set(keyword, [...(CONSTRUCTS_OF.get(keyword) ?? []), construct]);

export function sqlConstructs(sql: string): SqlConstruct[] {
  const words = significant(tokenize(sql));
  const found = new Set<SqlConstruct>();
  for (const w of words) if (w.kind === 'word') CONSTRUCTS_OF.get(w.text.toUpperCase())?.forEach((c) => found.add(c));
  words.forEach((w, i) => {
    if (isWord(w, 'GROUP') && isWord(words[i + 1], 'BY')) found.add('group_by');
    if (isWord(w, 'ORDER') && isWord(words[i + 1], 'BY')) found.add('order_by');
    if (w.text === '(' && isWord(words[i + 1], 'SELECT', 'WITH')) found.add('subquery');
    if (isWord(w, 'FROM') && commaAfterTable(words, i + 1)) found.add('join');
  });
  return SQL_CONSTRUCTS.filter((c) => found.has(c));
}

/** `FROM t [AS] [alias] ,`: a comma between FROM items is a join too. */
function commaAfterTable(words: Token[], at: number): boolean {
  let i = at + 1; // past the table name
  if (isWord(words[i], 'AS')) i++;
  if (words[i] && words[i].kind !== 'punct' && !isWord(words[i], ...CLAUSE_WORDS)) i++; // the alias
  return words[i]?.text === ',';
}

const CLAUSE_WORDS = [
  'WHERE',
  'GROUP',
  'ORDER',
  'LIMIT',
  'JOIN',
  'INNER',
  'LEFT',
  'CROSS',
  'NATURAL',
  'ON',
  'UNION',
  'HAVING',
];
