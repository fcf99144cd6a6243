import { LruMap } from '../../core/lru.js';
import { isWord, splice, sqlString, tokenize, unquote, type Token } from '../../runtime/sql/lexer.js';

/**
 * SQLite's clock, pinned. The CURRENT_* keywords and the time value 'now' of the date and
 * time functions make an answer depend on the day it is computed; nl2api replaces them with
 * the run's reference time (config `referenceTime`, UTC, as SQLite's clock is), so that the
 * gold SQL, the tool calls and the endpoints all see one moment and a rerun gives the same
 * samples. Done on tokens: a 'now' elsewhere (a value compared with a column) is left alone.
 */

/** The date and time functions whose time-value argument may be 'now'. */
const DATE_FUNCTIONS = new Set(['date', 'time', 'datetime', 'julianday', 'unixepoch', 'strftime', 'timediff']);

/** The functions whose time value may be omitted, meaning 'now'. */
const OMITTABLE = new Set(['date', 'time', 'datetime', 'julianday', 'unixepoch']);

/** Per clock token, its replacement for a reference time `YYYY-MM-DD HH:MM:SS`. */
function replacement(token: Token, inDateFunction: boolean, referenceTime: string): string | undefined {
  if (isWord(token, 'CURRENT_TIMESTAMP')) return sqlString(referenceTime);
  if (isWord(token, 'CURRENT_DATE')) return sqlString(referenceTime.slice(0, 10));
  if (isWord(token, 'CURRENT_TIME')) return sqlString(referenceTime.slice(11));
  if (inDateFunction && token.kind === 'string' && unquote(token).toLowerCase() === 'now')
    return sqlString(referenceTime);
  return undefined;
}

/** Every clock reading of `sql`, by token index, with what replaces it. */
function clockReadings(
  sql: string,
  referenceTime: string,
): { tokens: readonly Token[]; readings: Map<number, string> } {
  const tokens = tokenize(sql);
  const readings = new Map<number, string>();
  // The function each open parenthesis belongs to (null: none).
  const calls: (string | null)[] = [];
  let previous: Token | undefined;
  const meaningful = tokens.flatMap((token, i) => (token.kind === 'space' || token.kind === 'comment' ? [] : [i]));
  meaningful.forEach((i, k) => {
    const token = tokens[i];
    // date(), datetime(), …: the time value omitted is 'now'.
    if (
      token.text === '(' &&
      OMITTABLE.has(previous?.text.toLowerCase() ?? '') &&
      tokens[meaningful[k + 1]]?.text === ')'
    )
      readings.set(i, `(${sqlString(referenceTime)}`);
    // A plain parenthesis (grouping, a subquery) stays in the call it is in.
    if (token.text === '(')
      calls.push(previous?.kind === 'word' ? previous.text.toLowerCase() : (calls[calls.length - 1] ?? null));
    else if (token.text === ')') calls.pop();
    else {
      const call = calls[calls.length - 1];
      const text = replacement(token, call !== undefined && call !== null && DATE_FUNCTIONS.has(call), referenceTime);
      if (text !== undefined) readings.set(i, text);
    }
    previous = token;
  });
  return { tokens, readings };
}

const CLOCK_ANSWERS_KEPT = 1024;
const clockReaders = new LruMap<string, boolean>(CLOCK_ANSWERS_KEPT);

/** Does `sql` read SQLite's clock? Asked by every stage's cache key of an item: the recent answers are kept. */
export function readsClock(sql: string): boolean {
  return clockReaders.getOrSet(sql, () => clockReadings(sql, '0000-00-00 00:00:00').readings.size > 0);
}

/** `sql` with every clock reading replaced by `referenceTime` (unchanged when it reads no clock). */
export function pinClock(sql: string, referenceTime: string): string {
  const { tokens, readings } = clockReadings(sql, referenceTime);
  return readings.size === 0 ? sql : splice(tokens, readings);
}
