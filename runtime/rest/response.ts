import type { SqlValue } from '../../core/model.js';
import type { ResponseField, ResponseSpec } from './spec.js';

/**
 * An endpoint's response, from its ResponseSpec: the rows of its query as JSON objects (one
 * property per field, in column order), one object, one object or null, or a list, as its
 * shape says. Three views of one rule: the text the server sends (compiled once per
 * endpoint), the same as plain JSON for whoever records or checks it without HTTP, and the
 * JSON schema the OpenAPI document publishes.
 */

/** The response text of a query's rows, built without intermediate objects. */
export type ResponseSerializer = (rows: readonly (readonly SqlValue[])[]) => string;

/**
 * Keys are escaped once, here; values by their runtime type, whatever the schema expected: a
 * database whose data drifted from its declared types still gets valid JSON (never a 500).
 */
export function compileSerializer(response: ResponseSpec): ResponseSerializer {
  const keys = response.fields.map((field, i) => `${i ? ',' : '{'}${JSON.stringify(field.name)}:`);
  const object = (row: readonly SqlValue[]): string => {
    let text = '';
    for (let i = 0; i < keys.length; i++) text += keys[i] + valueText(row[i]);
    return text + '}';
  };
  if (response.shape === 'list')
    return (rows) => {
      let text = '[';
      for (let r = 0; r < rows.length; r++) text += (r ? ',' : '') + object(rows[r]);
      return text + ']';
    };
  return (rows) => (rows.length === 0 ? 'null' : object(singleRow(rows)));
}

/** The response as plain JSON: what a client parses from the serializer's text. */
export function responseBody(response: ResponseSpec, rows: readonly (readonly SqlValue[])[]): unknown {
  const object = (row: readonly SqlValue[]) =>
    Object.fromEntries(response.fields.map((field, i) => [field.name, jsonValue(row[i])]));
  if (response.shape === 'list') return rows.map(object);
  return rows.length === 0 ? null : object(singleRow(rows));
}

/**
 * The rows a response body carries, in field order; null when the body is not of the shape
 * and fields the spec says (a client's view of "the server answered something else").
 */
export function rowsOfBody(response: ResponseSpec, body: unknown): SqlValue[][] | null {
  const names = response.fields.map((field) => field.name);
  const rowOf = (value: unknown): SqlValue[] | null => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const record = value as Record<string, unknown>;
    if (Object.keys(record).length !== names.length) return null;
    const row: SqlValue[] = [];
    for (const name of names) {
      const cell = record[name];
      if (!(cell === null || typeof cell === 'string' || typeof cell === 'number')) return null;
      row.push(cell);
    }
    return row;
  };
  if (response.shape === 'list') {
    if (!Array.isArray(body)) return null;
    const rows = body.map(rowOf);
    return rows.every((row) => row !== null) ? rows : null;
  }
  if (body === null) return response.shape === 'object_or_null' ? [] : null;
  const row = rowOf(body);
  return row ? [row] : null;
}

/** The JSON schema of one response object (an OpenAPI 3.1 component). */
export function objectSchema(fields: readonly ResponseField[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(
      fields.map((field) => [field.name, { type: fieldTypes(field), description: field.description }]),
    ),
    required: fields.map((field) => field.name),
    additionalProperties: false,
  };
}

/** The JSON schema of a whole response body, given a reference to its object schema. */
export function bodySchema(response: ResponseSpec, object: Record<string, unknown>): Record<string, unknown> {
  switch (response.shape) {
    case 'list':
      return { type: 'array', items: object };
    case 'object':
      return object;
    case 'object_or_null':
      return { oneOf: [object, { type: 'null' }] };
  }
}

/** JSON schema types: `number` already admits integers; one type is written as itself. */
function fieldTypes(field: ResponseField): string | string[] {
  const types: string[] = field.types.includes('number')
    ? field.types.filter((t) => t !== 'integer')
    : [...field.types];
  if (field.nullable) types.push('null');
  return types.length === 1 ? types[0] : types;
}

/** JSON has no Infinity or NaN: written as null, as JSON.stringify does. */
function valueText(value: SqlValue | undefined): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  return 'null';
}

/** What JSON carries of a value: the text round trip (no -0, no Infinity), without the text. */
function jsonValue(value: SqlValue | undefined): SqlValue {
  if (typeof value !== 'number') return value ?? null;
  return Number.isFinite(value) ? value + 0 : null;
}

/** A one-object shape is the query's by construction (response-fields.ts); more rows would be lost, so they are a bug. */
function singleRow(rows: readonly (readonly SqlValue[])[]): readonly SqlValue[] {
  if (rows.length > 1) throw new Error(`a one-object response got ${rows.length} rows`);
  return rows[0];
}
