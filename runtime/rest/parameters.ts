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

/** The schema of one parameter's value; integers stay within the exactly representable ones. */
export function parameterSchema(param: ParameterSpec, limits: ParameterLimits): Record<string, unknown> {
  switch (param.type) {
    case 'string':
      return {
        type: 'string',
        maxLength: limits.maxStringLength,
        ...(param.format ? { pattern: DATE_PATTERNS[param.format].source } : {}),
      };
    case 'integer':
      return { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
    case 'number':
      return { type: 'number' };
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
 * numbers, so finiteness is checked here, after validation.
 */
export function checkFinite(params: readonly ParameterSpec[], args: Readonly<Record<string, ArgumentValue>>): void {
  for (const param of params) {
    const value = args[param.name];
    if (typeof value === 'number' && !Number.isFinite(value))
      throw new InvalidParameterError(`parameter '${param.name}' is out of range`);
  }
}

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
 * Why a value a tool call gives (JSON, from an MCP client or a model) is not of the parameter's
 * type, in one line; undefined when it is, or when only the server can tell (text for a number
 * is a query string's own form: the server reads it and refuses what is not a number). A list,
 * an object or null is never a query parameter; a number or a boolean is not text.
 */
export function argumentTypeProblem(name: string, value: unknown, param: ParameterSpec): string | undefined {
  const notScalar = value === null || typeof value === 'object';
  if (notScalar || (param.type === 'string' && typeof value !== 'string')) {
    const given =
      value === null ? 'null' : Array.isArray(value) ? 'a list' : notScalar ? 'an object' : `a ${typeof value}`;
    return `argument '${name}' must be ${ARTICLED[param.type]}, not ${given}`;
  }
  if (param.format && typeof value === 'string' && !DATE_PATTERNS[param.format].test(value))
    return `argument '${name}' must be ${FORMATS[param.format]}, not ${JSON.stringify(value)}`;
  return undefined;
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
 * exponent (or Infinity, which checkFinite refuses as out of range). Ajv's coercion would also
 * take `0x10`, `0b1` and ` 1 ` (whatever `Number()` reads).
 */
export const NUMERAL = /^[+-]?((\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|Infinity)$/;
