import { BINDABLE_NUMBER, isBindableNumber } from '../../core/numbers.js';
import type { ArgumentValue, ParameterSpec } from './spec.js';

/**
 * JSON Schemas of an endpoint's query parameters: one rule set, used both to validate
 * requests (Fastify/Ajv, coercing the query string's text to the declared types) and to
 * document them in the OpenAPI document, so the two cannot disagree.
 */

export const DEFAULT_MAX_STRING_LENGTH = 1000;

export interface ParameterLimits {
  /** Longest accepted string value, in characters. */
  maxStringLength: number;
}

/**
 * The forms of a date parameter's text, as SQLite writes dates (ISO 8601, what its date
 * functions read): a pattern rather than JSON Schema's `format`, which Ajv checks only with a
 * plugin, and which the OpenAPI document and the tool schemas then show as it is enforced.
 */
export const DATE_PATTERNS: Record<NonNullable<ParameterSpec['format']>, RegExp> = {
  date: /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/,
  'date-time': /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[ T]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?$/,
};

/** The date form a text value takes, if any: what a parameter compared with a column of such values declares. */
export function dateFormatOf(value: unknown): ParameterSpec['format'] {
  if (typeof value !== 'string') return undefined;
  return DATE_PATTERNS.date.test(value) ? 'date' : DATE_PATTERNS['date-time'].test(value) ? 'date-time' : undefined;
}

/**
 * The schema of one parameter's value; integers stay within the exactly representable ones.
 * A spec's `enum`, `minimum` and `maximum` are added where it has them (a spec without them
 * gives the very schema it always did).
 */
export function parameterSchema(param: ParameterSpec, limits: ParameterLimits): Record<string, unknown> {
  const values = param.enum ? { enum: [...param.enum] } : {};
  switch (param.type) {
    case 'string':
      return {
        type: 'string',
        maxLength: limits.maxStringLength,
        ...(param.format ? { pattern: DATE_PATTERNS[param.format].source } : {}),
        ...values,
      };
    case 'integer':
      return {
        type: 'integer',
        minimum: Math.max(Number.MIN_SAFE_INTEGER, param.minimum ?? -Infinity),
        maximum: Math.min(Number.MAX_SAFE_INTEGER, param.maximum ?? Infinity),
        ...values,
      };
    case 'number':
      return {
        type: 'number',
        ...(param.minimum !== undefined ? { minimum: param.minimum } : {}),
        ...(param.maximum !== undefined ? { maximum: param.maximum } : {}),
        ...values,
      };
    case 'boolean':
      return { type: 'boolean' };
  }
}

/** The schema of a request's whole query string: declared parameters only, required ones present. */
export function querystringSchema(params: readonly ParameterSpec[], limits: ParameterLimits): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(params.map((param) => [param.name, parameterSchema(param, limits)])),
    required: params.filter((param) => param.required).map((param) => param.name),
    additionalProperties: false,
  };
}

/** A parameter value the schema lets through but the endpoint cannot take. */
export class InvalidParameterError extends Error {
  override name = 'InvalidParameterError';
}

/**
 * Ajv coerces "Infinity" and "1e400" to Infinity and skips numeric bounds on non-finite
 * numbers, and a `number` parameter has no bounds of its own: what SQLite cannot bind (a
 * non-finite number, an integral one past 64 bits, which the driver refuses with its own
 * message) is refused here, after validation and before any SQL runs.
 */
export function checkBindable(params: readonly ParameterSpec[], args: Readonly<Record<string, ArgumentValue>>): void {
  for (const param of params) {
    const value = args[param.name];
    if (typeof value === 'number' && !isBindableNumber(value))
      throw new InvalidParameterError(`parameter '${param.name}' must be ${NUMERIC[param.type]}`);
  }
}

/** What a numeric parameter's values must be, in words. */
const NUMERIC: Record<ParameterSpec['type'], string> = {
  string: 'a string',
  integer: `an integer within ±${Number.MAX_SAFE_INTEGER}`,
  number: BINDABLE_NUMBER,
  boolean: 'a boolean',
};

/** Whether a value is of a parameter type (integers must be integral and safe). */
export function valueFitsType(value: unknown, type: ParameterSpec['type']): value is ArgumentValue {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
  }
}

/**
 * Why a value a tool call gives (JSON, from an MCP client or a model) is not one the parameter
 * takes, in one line naming the argument, what it must be and what it was; undefined when it
 * is one. The same rules as the server's (parameterSchema, checkBindable), so that a value of
 * the wrong type, out of the parameter's values or past its bounds is refused before any
 * request: a list, an object or null is never a query parameter; a number or a boolean is not
 * text; a number may come as text (a query string's own form) but must read as one.
 */
export function argumentTypeProblem(name: string, value: unknown, param: ParameterSpec): string | undefined {
  const notScalar = value === null || typeof value === 'object';
  const wrongScalar =
    param.type === 'string'
      ? typeof value !== 'string'
      : param.type === 'boolean'
        ? typeof value === 'number'
        : typeof value === 'boolean';
  if (notScalar || wrongScalar) {
    const given =
      value === null ? 'null' : Array.isArray(value) ? 'a list' : notScalar ? 'an object' : `a ${typeof value}`;
    return `argument '${name}' must be ${ARTICLED[param.type]}, not ${given}`;
  }
  const must = (what: string) => `argument '${name}' must be ${what}, not ${shownValue(value)}`;
  if (param.type === 'boolean')
    return typeof value === 'boolean' || value === 'true' || value === 'false' ? undefined : must('a boolean');
  if (param.type === 'string') {
    if (param.format && !DATE_PATTERNS[param.format].test(value as string)) return must(FORMATS[param.format]);
  } else {
    const number = typeof value === 'number' ? value : NUMERAL.test(value as string) ? Number(value) : undefined;
    if (number === undefined) return must(ARTICLED[param.type]);
    if (param.type === 'integer' && !Number.isInteger(number)) return must('an integer');
    if (param.type === 'integer' ? !Number.isSafeInteger(number) : !isBindableNumber(number))
      return must(NUMERIC[param.type]);
    if (param.minimum !== undefined && number < param.minimum) return must(`at least ${param.minimum}`);
    if (param.maximum !== undefined && number > param.maximum) return must(`at most ${param.maximum}`);
    if (param.enum && !param.enum.includes(number)) return must(`one of ${enumText(param.enum)}`);
    return undefined;
  }
  if (param.enum && !param.enum.includes(value as string)) return must(`one of ${enumText(param.enum)}`);
  return undefined;
}

/** An enumerated parameter's values, for a one-line message: the first ones up to about 300 characters. */
export function enumText(values: readonly unknown[]): string {
  const shown: string[] = [];
  let length = 0;
  for (const value of values) {
    const text = shownValue(value);
    if (shown.length > 0 && length + text.length > 300) break;
    shown.push(text);
    length += text.length + 2;
  }
  return shown.length < values.length ? `${shown.join(', ')}, … (${values.length} in all)` : shown.join(', ');
}

/** A value as a message quotes it: JSON, long text clipped. */
function shownValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** What a date pattern of DATE_PATTERNS asks for, in words (the server's 400 says it); undefined for another pattern. */
export function datePatternText(pattern: string): string | undefined {
  const format = (Object.keys(DATE_PATTERNS) as NonNullable<ParameterSpec['format']>[]).find(
    (f) => DATE_PATTERNS[f].source === pattern,
  );
  return format && FORMATS[format];
}

const FORMATS: Record<NonNullable<ParameterSpec['format']>, string> = {
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date and time (YYYY-MM-DD HH:MM:SS)',
};

const ARTICLED: Record<ParameterSpec['type'], string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
};

/** Names in a parsed query whose name or value is not valid text (parseQuery): the validator refuses them. */
export const MALFORMED = Symbol('malformed');
export type ParsedQuery = Record<string, string | string[]> & { [MALFORMED]?: string[] };

/**
 * A query string's parameters as Fastify's own parser reads them (`+` is a space, a repeated
 * name gives an array, no prototype), except that a name or value that is not valid text — a
 * malformed percent-escape (`%zz`, a lone `%`), an escape that is not UTF-8 (`%FF`, `%C3%28`)
 * or a NUL character — is listed under MALFORMED rather than taken literally: Fastify's parser
 * keeps such text still escaped, so `%C3%28` would be looked up as those six characters.
 */
export function parseQuery(text: string): ParsedQuery {
  const query = Object.create(null) as ParsedQuery;
  const malformed: string[] = [];
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    const name = decodeText(rawName);
    const value = decodeText(rawValue);
    const key = name ?? rawName;
    if (name === undefined || value === undefined) malformed.push(key);
    const previous = query[key];
    if (previous === undefined) query[key] = value ?? rawValue;
    else if (Array.isArray(previous)) previous.push(value ?? rawValue);
    else query[key] = [previous, value ?? rawValue];
  }
  // Not enumerable: the query's parameters are its own string keys only.
  if (malformed.length) Object.defineProperty(query, MALFORMED, { value: malformed });
  return query;
}

function decodeText(raw: string): string | undefined {
  const spaced = raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  let text: string;
  try {
    text = spaced.includes('%') ? decodeURIComponent(spaced) : spaced;
  } catch {
    return undefined;
  }
  return text.includes('\0') ? undefined : text;
}

/**
 * A number as a query string writes it: decimal, optionally signed, with a fraction or an
 * exponent (or Infinity, which checkBindable refuses). Ajv's coercion would also
 * take `0x10`, `0b1` and ` 1 ` (whatever `Number()` reads).
 */
export const NUMERAL = /^[+-]?((\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|Infinity)$/;
