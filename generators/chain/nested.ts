import type { SqlValue } from '../../core/model.js';
import { isWord, splice, sqlString, tokenize, type Token } from '../../runtime/sql/lexer.js';

/**
 * A gold SQL statement that already nests (issue 36): `… WHERE x = (SELECT …)` or
 * `… x IN (SELECT …)`, the subquery a first hop and the statement around it a second, the
 * subquery's one value what links them. Found by the lexer: the first comparison `=` or `IN`
 * (not `NOT IN`) whose right side is a parenthesized SELECT. Whether the subquery stands
 * alone (it names nothing of the outer query) is for SQLite to say, by running it.
 */

export interface NestedSplit {
  /** The subquery's SQL, as written. */
  inner: string;
  /** The statement with the subquery replaced by one value (`= <literal>`, `IN (<literal>)`). */
  outer(value: SqlValue): string;
}

export function splitNested(sql: string): NestedSplit | undefined {
  const tokens = tokenize(sql);
  const meaningful = tokens.map((t, i) => [t, i] as const).filter(([t]) => t.kind !== 'space' && t.kind !== 'comment');
  for (let k = 0; k + 2 < meaningful.length; k++) {
    const [operator] = meaningful[k];
    const [open, openAt] = meaningful[k + 1];
    const [select] = meaningful[k + 2];
    const comparison =
      (operator.kind === 'op' && (operator.text === '=' || operator.text === '==')) || isWord(operator, 'IN');
    if (!comparison || open.text !== '(' || !isWord(select, 'SELECT')) continue;
    if (isWord(operator, 'IN') && k > 0 && isWord(meaningful[k - 1][0], 'NOT')) continue;
    const closeAt = closingParen(tokens, openAt);
    if (closeAt === undefined) return undefined;
    const inner = tokens
      .slice(openAt + 1, closeAt)
      .map((t) => t.text)
      .join('')
      .trim();
    return {
      inner,
      outer: (value) => {
        const replacements = new Map<number, string>();
        for (let i = openAt; i <= closeAt; i++) replacements.set(i, '');
        replacements.set(openAt, isWord(operator, 'IN') ? `(${literal(value)})` : literal(value));
        return splice(tokens, replacements);
      },
    };
  }
  return undefined;
}

function closingParen(tokens: readonly Token[], openAt: number): number | undefined {
  let depth = 0;
  for (let i = openAt; i < tokens.length; i++) {
    if (tokens[i].text === '(') depth++;
    else if (tokens[i].text === ')' && --depth === 0) return i;
  }
  return undefined;
}

/** A value as a SQL literal: text quoted, numbers as they are (a NULL links nothing: never asked). */
function literal(value: SqlValue): string {
  if (typeof value === 'string') return sqlString(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new Error(`no literal for ${JSON.stringify(value)}`);
}
