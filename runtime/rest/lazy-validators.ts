import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { LruMap } from '../../core/lru.js';
import { NUMERAL, MALFORMED, type ParsedQuery } from './parameters.js';

/**
 * Query-string validators compiled on a route's first request instead of at startup. A
 * database's server has a route per endpoint (hundreds), and the pipeline starts one per
 * database in every worker, each of which calls only its share of the routes: compiling
 * all of them up front was most of a server's start time. The Ajv options are the ones the
 * server always used (coerce query text to the declared types; refuse, never drop, unknown
 * parameters; no defaults; every error reported). Before Ajv, text Ajv would misread is
 * refused: names or values that are not valid text (parameters.ts parseQuery) and numbers
 * not written in decimal.
 *
 * One Ajv and its compiled validators are shared by every server of the process: a new Ajv
 * compiles its meta-schema, and about half of a run's routes declare a query string another
 * route (of this or another database) declared already. A compiled validator keeps the errors
 * of its last call, which each caller reads at once, before anything else can call it.
 */
export function useLazyValidators(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema }) => {
    let compiled: ValidateFunction | undefined;
    // Fastify reads the errors of a failed validation from the validator's `errors`, as Ajv's own functions carry them.
    const validate = (data: unknown): boolean => {
      compiled ??= compiledValidator(schema);
      // Unreadable text is all there is to say: Ajv would only add complaints about the escaped text.
      const malformed = (data as ParsedQuery | null)?.[MALFORMED];
      if (malformed) {
        validate.errors = malformed.map((name) => issue('encoding', name, {}, 'is not valid text'));
        return false;
      }
      // Before Ajv, which coerces the values in place.
      const numerals = nonDecimalNumbers(data, schema);
      const ok = compiled(data) && numerals.length === 0;
      validate.errors = numerals.length ? [...numerals, ...(compiled.errors ?? [])] : compiled.errors;
      return ok;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  });
}

const ajv = new Ajv({ coerceTypes: true, removeAdditional: false, useDefaults: false, allErrors: true });
const VALIDATORS_KEPT = 512;
const validators = new LruMap<string, ValidateFunction>(VALIDATORS_KEPT);

function compiledValidator(schema: unknown): ValidateFunction {
  return validators.getOrSet(JSON.stringify(schema), () => {
    const compiled = ajv.compile(schema as object);
    // Ajv keeps every schema it compiled; the bounded map above is the only cache kept.
    ajv.removeSchema(schema as object);
    return compiled;
  });
}

/** A numeric parameter given as text that is not a decimal number (`0x10`, ` 1 `): a type error. */
function nonDecimalNumbers(data: unknown, schema: unknown): ErrorObject[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | null)?.properties;
  if (!properties || typeof data !== 'object' || data === null) return [];
  return Object.entries(data as Record<string, unknown>).flatMap(([name, value]) => {
    const type = Object.hasOwn(properties, name) ? properties[name].type : undefined;
    return (type === 'integer' || type === 'number') && typeof value === 'string' && !NUMERAL.test(value)
      ? [issue('type', name, { type }, `must be ${type}`)]
      : [];
  });
}

function issue(keyword: string, name: string, params: Record<string, unknown>, message: string): ErrorObject {
  return { keyword, instancePath: `/${name}`, schemaPath: `#/properties/${name}`, params, message };
}
