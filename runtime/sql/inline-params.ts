import { isWord, sqlString, tokenize, type Token, type TokenKind } from './lexer.js';
import { toBindable, type SqlParam } from './executor.js';

/**
 * A statement with its `?` parameters written in as the literals they bind as: the text a
 * statement *means*, so that the same query asked with bound values (a REST endpoint called
 * with the question's arguments) and with literals (the gold SQL it was made from) can be
 * recognized as one. Used to name results, never to run SQL: what runs is always the
 * statement with its parameters bound.
 *
 * A value is written in only where the literal provably denotes the very value bound
 * (executor.ts's toBindable: integral numbers bind as INTEGER, others as REAL): integers,
 * text (without NUL, which SQL text cannot carry), NULL, and REALs whose shortest decimal
 * form SQLite reads back exactly (up to 15 significant digits, magnitudes 1e-30..1e30:
 * longer or more extreme ones are not always read back to the same double). Otherwise,
 * or when a literal would run into its neighbours (`-?` with a negative value is a comment),
 * or where an integer could read as a column's position (`ORDER BY ?`, `GROUP BY a, ?`),
 * there is no such text: null.
 */
export function inlinedStatement(sql: string, params: readonly SqlParam[]): string | null {
  if (params.length === 0) return sql;
  const tokens = tokenize(sql);
  const literals: string[] = [];
  const expected: TokenKind[] = [];
  let next = 0;
  let previous: Token | undefined;
  const ordinals = /\b(ORDER|GROUP)\s+BY\b/i.test(sql);
  for (const token of tokens) {
    if (token.kind !== 'param') {
      expected.push(token.kind);
      if (token.kind !== 'space' && token.kind !== 'comment') previous = token;
      continue;
    }
    if (token.text !== '?' || next >= params.length) return null;
    const literal = literalOf(params[next++]);
    if (literal === null) return null;
    // `ORDER BY 2` sorts by the second column, `ORDER BY ?` bound to 2 by a constant.
    if (ordinals && /^-?\d+$/.test(literal) && (isWord(previous, 'BY') || previous?.text === ',')) return null;
    previous = token;
    literals.push(literal);
    expected.push(...literalKinds(literal));
  }
  if (next !== params.length) return null;
  let written = 0;
  const text = tokens.map((t) => (t.kind === 'param' ? literals[written++] : t.text)).join('');
  return sameKinds(tokenize(text), expected) ? text : null;
}

function literalOf(param: SqlParam): string | null {
  const bound = toBindable(param);
  if (bound === null) return 'NULL';
  if (typeof bound === 'bigint') return INT64_MIN < bound && bound <= INT64_MAX ? bound.toString() : null;
  if (typeof bound === 'string') return bound.includes('\0') ? null : sqlString(bound);
  return exactReal(bound) ? String(bound) : null;
}

const INT64_MAX = 2n ** 63n - 1n;
// -2^63 written out is 2^63 (a REAL in SQLite's reading) negated.
const INT64_MIN = -(2n ** 63n);

function exactReal(value: number): boolean {
  const magnitude = Math.abs(value);
  if (!Number.isFinite(value) || magnitude < 1e-30 || magnitude > 1e30) return false;
  const digits = String(magnitude).replace(/e.*$/, '').replace('.', '').replace(/^0+/, '');
  return digits.length <= 15;
}

/** A negative number is two tokens, `-` and the number. */
function literalKinds(literal: string): TokenKind[] {
  if (literal.startsWith("'")) return ['string'];
  if (literal === 'NULL') return ['word'];
  return literal.startsWith('-') ? ['op', 'number'] : ['number'];
}

function sameKinds(tokens: readonly Token[], expected: TokenKind[]): boolean {
  return tokens.length === expected.length && tokens.every((t, i) => t.kind === expected[i]);
}
