import { splice, tokenize } from '../sql/lexer.js';
import { valueFitsType } from './parameters.js';
import { placeholderOccurrences } from './placeholders.js';
import type { ArgumentValue, ParameterSpec } from './spec.js';

/**
 * Named placeholders → positional `?` with their values in order (the executor takes
 * positional parameters). Values are coerced to the parameter's declared type as a query
 * string would be parsed (integral numbers bind as INTEGER, booleans as 1/0); an omitted
 * optional parameter binds NULL. Anything else is a caller error, thrown as BindError.
 */

export class BindError extends Error {
  override name = 'BindError';
}

export interface BoundSql {
  sql: string;
  params: (string | number | null)[];
}

export function bindPlaceholders(sql: string, args: Record<string, ArgumentValue>, params: ParameterSpec[]): BoundSql {
  const tokens = tokenize(sql);
  const declared = new Map(params.map((p) => [p.name, p]));
  for (const name of Object.keys(args)) if (!declared.has(name)) throw new BindError(`unknown argument ${name}`);
  const replacements = new Map<number, string>();
  const values: (string | number | null)[] = [];
  for (const occurrence of placeholderOccurrences(tokens)) {
    if (occurrence.name === null) throw new BindError(`unsupported placeholder ${occurrence.text}: use :name`);
    const param = declared.get(occurrence.name);
    if (!param) throw new BindError(`undeclared placeholder :${occurrence.name}`);
    replacements.set(occurrence.index, '?');
    values.push(bindValue(param, Object.hasOwn(args, param.name) ? args[param.name] : undefined));
  }
  return { sql: splice(tokens, replacements), params: values };
}

function bindValue(param: ParameterSpec, value: ArgumentValue | undefined): string | number | null {
  if (value === undefined) {
    if (param.required) throw new BindError(`missing required argument ${param.name}`);
    return null;
  }
  const coerced = coerce(value, param.type);
  if (!valueFitsType(coerced, param.type))
    throw new BindError(`argument ${param.name} is not of type ${param.type}: ${JSON.stringify(value)}`);
  return typeof coerced === 'boolean' ? (coerced ? 1 : 0) : coerced;
}

/** A query-string value (always a string on the wire) read as the declared type. */
function coerce(value: ArgumentValue, type: ParameterSpec['type']): unknown {
  if (type === 'string') return typeof value === 'number' ? String(value) : value;
  if (typeof value !== 'string') return value;
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  const trimmed = value.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : value;
}
