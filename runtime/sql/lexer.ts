import { LruMap } from '../../core/lru.js';
/**
 * A SQLite lexer with source positions, for code that reads or rewrites SQL by token
 * (double-quoted strings resolved, literals turned into placeholders, placeholders into `?`)
 * and must never touch the inside of a string, a quoted identifier or a comment: regexes
 * over raw text cannot promise that. Lossless: the tokens' texts concatenate back to the input.
 */

export type TokenKind =
  | 'space'
  | 'comment'
  /** 'text' (doubled quotes escape). */
  | 'string'
  /** "name": an identifier (or, in SQLite's fallback, a string: resolve it first). */
  | 'dquote'
  /** `name` or [name]. */
  | 'quoted'
  | 'number'
  | 'word'
  /** `:name`, and SQLite's other parameter forms `?`, `?NNN`, `@name`, `$name`. */
  | 'param'
  | 'op'
  | 'punct';

export interface Token {
  kind: TokenKind;
  text: string;
  start: number;
  end: number;
  /** A string, quoted identifier or block comment that runs to the end of the input. */
  unterminated?: boolean;
}

const OPERATORS = [
  '<=',
  '>=',
  '<>',
  '!=',
  '==',
  '||',
  '<<',
  '>>',
  '=',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&',
  '|',
  '~',
];
const WORD_START = /[\p{L}_]/u;
const WORD_PART = /[\p{L}\p{N}_$]/u;

const TOKENIZED_KEPT = 256;
const tokenized = new LruMap<string, readonly Token[]>(TOKENIZED_KEPT);

/**
 * The same text is tokenized by many readers over an item's life (gold's shape, clock and
 * tie checks, REST's placeholder, format and scope checks, variants, memo keys): the recent
 * texts' tokens are kept, frozen, and shared.
 */
export function tokenize(sql: string): readonly Token[] {
  return tokenized.getOrSet(sql, () => Object.freeze(lex(sql)));
}

function lex(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, end: number, unterminated = false) => {
    const text = sql.slice(i, end);
    tokens.push(
      Object.freeze(unterminated ? { kind, text, start: i, end, unterminated } : { kind, text, start: i, end }),
    );
    i = end;
  };
  const length = sql.length;
  while (i < length) {
    const ch = sql[i];
    const next = sql[i + 1];
    if (isSpace(sql, i)) {
      let j = i + 1;
      while (j < length && isSpace(sql, j)) j++;
      push('space', j);
    } else if (ch === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      push('comment', end === -1 ? length : end);
    } else if (ch === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      push('comment', end === -1 ? length : end + 2, end === -1);
    } else if (ch === "'" || ch === '"' || ch === '`' || ch === '[') {
      const close = ch === '[' ? ']' : ch;
      let j = i + 1;
      let closed = false;
      while (j < length) {
        if (sql[j] === close) {
          if (close !== ']' && sql[j + 1] === close) {
            j += 2;
            continue;
          }
          closed = true;
          break;
        }
        j++;
      }
      push(ch === "'" ? 'string' : ch === '"' ? 'dquote' : 'quoted', closed ? j + 1 : length, !closed);
    } else if (isDigit(sql, i) || (ch === '.' && isDigit(sql, i + 1))) {
      push('number', numberEnd(sql, i));
    } else if (isWordStart(sql, i)) {
      push('word', wordEnd(sql, i + 1));
    } else if ((ch === ':' || ch === '@' || ch === '$') && isWordStart(sql, i + 1)) {
      push('param', wordEnd(sql, i + 2));
    } else if (ch === '?') {
      let j = i + 1;
      while (j < length && isDigit(sql, j)) j++;
      push('param', j);
    } else {
      const op = OPERATORS.find((o) => sql.startsWith(o, i));
      if (op) push('op', i + op.length);
      else push('punct', i + 1);
    }
  }
  return tokens;
}

// Character classes by code, ASCII first: the Unicode-aware regexes only beyond it (a run
// lexes every statement it sends, several thousand of them).
function isSpace(sql: string, i: number): boolean {
  const code = sql.charCodeAt(i);
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return /\s/.test(sql[i]);
}

function isDigit(sql: string, i: number): boolean {
  const code = sql.charCodeAt(i);
  return code >= 48 && code <= 57;
}

function isAsciiLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

function isWordStart(sql: string, i: number): boolean {
  if (i >= sql.length) return false;
  const code = sql.charCodeAt(i);
  if (code < 128) return isAsciiLetter(code);
  return WORD_START.test(sql[i]);
}

/** Where a word (or a named parameter's name) that goes on at `from` ends. */
function wordEnd(sql: string, from: number): number {
  let j = from;
  for (; j < sql.length; j++) {
    const code = sql.charCodeAt(j);
    if (code < 128) {
      if (!(isAsciiLetter(code) || (code >= 48 && code <= 57) || code === 36)) break;
    } else if (!WORD_PART.test(sql[j])) break;
  }
  return j;
}

// Sticky: matched at lastIndex, without copying the rest of the text for each number.
const HEX_NUMBER = /0[xX][0-9a-fA-F]+/y;
const DECIMAL_NUMBER = /(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;

function numberEnd(sql: string, start: number): number {
  for (const pattern of [HEX_NUMBER, DECIMAL_NUMBER]) {
    pattern.lastIndex = start;
    if (pattern.test(sql)) return pattern.lastIndex;
  }
  return start + 1;
}

/** Indexes (into `tokens`) of the significant tokens outside parentheses: a statement's own clauses. */
export function topLevel(tokens: readonly Token[]): number[] {
  const indexes: number[] = [];
  let depth = 0;
  tokens.forEach((token, i) => {
    if (token.kind === 'space' || token.kind === 'comment') return;
    if (token.text === '(') depth++;
    else if (token.text === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) indexes.push(i);
  });
  return indexes;
}

/** Tokens that carry meaning (not whitespace or comments). */
export function significant(tokens: readonly Token[]): Token[] {
  return tokens.filter((t) => t.kind !== 'space' && t.kind !== 'comment');
}

/** The unquoted text of a string, double-quoted or quoted token. */
export function unquote(token: Token): string {
  if (token.kind === 'quoted' && token.text.startsWith('[')) return token.text.slice(1, -1);
  if (token.kind !== 'string' && token.kind !== 'dquote' && token.kind !== 'quoted') return token.text;
  const quote = token.text[0];
  const body = token.unterminated ? token.text.slice(1) : token.text.slice(1, -1);
  return body.split(quote + quote).join(quote);
}

export function isWord(token: Token | undefined, ...words: string[]): boolean {
  return token?.kind === 'word' && words.includes(token.text.toUpperCase());
}

/** A `:name` placeholder's name; null for other tokens. */
export function placeholderName(token: Token): string | null {
  return token.kind === 'param' && token.text.startsWith(':') ? token.text.slice(1) : null;
}

/** Replaces tokens by index (`replacements`: token index → new text). */
export function splice(tokens: readonly Token[], replacements: ReadonlyMap<number, string>): string {
  return tokens.map((t, i) => replacements.get(i) ?? t.text).join('');
}

/**
 * `[name]` written `` `name` ``: SQLite's bracket quoting (always an identifier) in a form
 * node-sql-parser's grammars read, which have no brackets. The same name either way.
 */
export function bracketsAsBackticks(sql: string): string {
  return tokenize(sql)
    .map((t) =>
      t.kind === 'quoted' && t.text.startsWith('[') && !t.unterminated
        ? `\`${unquote(t).split('`').join('``')}\``
        : t.text,
    )
    .join('');
}

/** SQLite's spellings of the six comparisons, each to its canonical one. */
export const COMPARISON_SPELLINGS = {
  '=': '=',
  '==': '=',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
} as const satisfies Record<string, '=' | '!=' | '<' | '<=' | '>' | '>='>;

/** A text literal for `value`, quotes doubled. */
export function sqlString(value: string): string {
  return `'${value.split("'").join("''")}'`;
}
