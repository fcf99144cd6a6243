import { isWord, unquote, type Token } from '../../runtime/sql/lexer.js';

/**
 * A WITH clause read off the tokens (`WITH [RECURSIVE] name [(columns)] AS [[NOT]
 * MATERIALIZED] (select), ...`): the format check asks where the statement's main SELECT
 * starts, the template synthesizer and the format check where a recursive table's recursive
 * SELECT is (recursiveSelects). Positions are indices into the tokens given: significant
 * ones (no spaces, no comments).
 */

export interface WithDefinition {
  /** The table's name, unquoted. */
  name: string;
  /** The parentheses around its body. */
  open: number;
  close: number;
}

/** The clause whose WITH is at `start`, and the index after it; null when malformed or a body is not a query. */
export function readWithClause(code: readonly Token[], start = 0): { tables: WithDefinition[]; end: number } | null {
  const tables: WithDefinition[] = [];
  let i: number | null = isWord(code[start + 1], 'RECURSIVE') ? start + 2 : start + 1;
  for (;;) {
    const name = code[i];
    if (name?.kind !== 'word' && name?.kind !== 'dquote' && name?.kind !== 'quoted') return null;
    i++;
    if (isPunct(code[i], '(')) {
      i = pastParentheses(code, i);
      if (i === null) return null;
    }
    if (!isWord(code[i], 'AS')) return null;
    i++;
    if (isWord(code[i], 'NOT') && isWord(code[i + 1], 'MATERIALIZED')) i += 2;
    else if (isWord(code[i], 'MATERIALIZED')) i++;
    if (!isPunct(code[i], '(') || !isWord(code[i + 1], 'SELECT', 'VALUES', 'WITH')) return null;
    const open = i;
    i = pastParentheses(code, i);
    if (i === null) return null;
    tables.push({ name: unquote(name), open, close: i - 1 });
    if (!isPunct(code[i], ',')) return { tables, end: i };
    i++;
  }
}

/**
 * The token ranges, [first, last] in `tokens` (all of them), of the recursive SELECTs of the
 * recursive WITH tables named `tables` (NormalizedQuery `recursive`): from the UNION after
 * the table's initial SELECT to the parenthesis closing its body. WITH clauses nested in
 * subqueries count too.
 */
export function recursiveSelects(tokens: readonly Token[], tables: readonly string[]): [number, number][] {
  if (tables.length === 0) return [];
  const names = new Set(tables.map((t) => t.toLowerCase()));
  const at = tokens.flatMap((t, i) => (t.kind === 'space' || t.kind === 'comment' ? [] : [i]));
  const code = at.map((i) => tokens[i]);
  const ranges: [number, number][] = [];
  code.forEach((token, k) => {
    if (!isWord(token, 'WITH')) return;
    for (const table of readWithClause(code, k)?.tables ?? []) {
      if (!names.has(table.name.toLowerCase())) continue;
      const union = unionIn(code, table);
      if (union !== null) ranges.push([at[union], at[table.close]]);
    }
  });
  return ranges;
}

/** The first UNION directly in a body's parentheses (not in a nested query), or null. */
function unionIn(code: readonly Token[], { open, close }: WithDefinition): number | null {
  let depth = 0;
  for (let i = open + 1; i < close; i++) {
    if (isPunct(code[i], '(')) depth++;
    else if (isPunct(code[i], ')')) depth--;
    else if (depth === 0 && isWord(code[i], 'UNION')) return i;
  }
  return null;
}

export function isPunct(token: Token | undefined, text: string): boolean {
  return token?.kind === 'punct' && token.text === text;
}

/** The index after the `)` that closes the `(` at `open`; null when it is never closed. */
export function pastParentheses(tokens: readonly Token[], open: number): number | null {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (isPunct(tokens[i], '(')) depth++;
    else if (isPunct(tokens[i], ')') && --depth === 0) return i + 1;
  }
  return null;
}
