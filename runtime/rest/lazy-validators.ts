import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';

/**
 * Query-string validators compiled on a route's first request instead of at startup. A
 * database's server has a route per endpoint (hundreds), and the pipeline starts one per
 * database in every worker, each of which calls only its share of the routes: compiling
 * all of them up front was most of a server's start time. The Ajv options are the ones the
 * server always used (coerce query text to the declared types; refuse, never drop, unknown
 * parameters; no defaults; every error reported).
 */
export function useLazyValidators(app: FastifyInstance): void {
  const ajv = new Ajv({ coerceTypes: true, removeAdditional: false, useDefaults: false, allErrors: true });
  app.setValidatorCompiler(({ schema }) => {
    let compiled: ValidateFunction | undefined;
    // Fastify reads the errors of a failed validation from the validator's `errors`, as Ajv's own functions carry them.
    const validate = (data: unknown): boolean => {
      compiled ??= ajv.compile(schema);
      const ok = compiled(data);
      validate.errors = compiled.errors;
      return ok;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  });
}
