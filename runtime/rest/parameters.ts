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

/** The schema of one parameter's value; integers stay within the exactly representable ones. */
export function parameterSchema(param: ParameterSpec, limits: ParameterLimits): Record<string, unknown> {
  switch (param.type) {
    case 'string':
      return { type: 'string', maxLength: limits.maxStringLength };
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
