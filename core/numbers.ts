/**
 * What SQLite can take of a JSON number: a finite one, and, when it is integral (which the
 * executor binds as INTEGER, docs/TOOLS.md "Values"), one within 64 bits. 1e308 is an integer
 * to JavaScript; bound, the driver refuses it with its own message ("too big"). Every edge
 * that takes numbers from a caller (REST parameters, SLOT/SEL values) refuses the rest first.
 */

/** 2^63: the first integral double SQLite cannot take as INTEGER (both signs: |n| < 2^63). */
export const INT64_LIMIT = 2 ** 63;

export function isBindableNumber(value: number): boolean {
  return Number.isFinite(value) && (!Number.isInteger(value) || Math.abs(value) < INT64_LIMIT);
}

/** What a bindable number is, in words, for an error message. */
export const BINDABLE_NUMBER = 'a finite number (an integral one within ±9223372036854775807)';
