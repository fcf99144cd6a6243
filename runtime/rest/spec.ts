import { z } from 'zod';

/**
 * The REST formulation's data (issue 3, DESIGN.md "REST"): an endpoint spec is what a
 * synthesizer (the deterministic template one, or the LLM agent) proposes for an instance —
 * validated data, never code: our own server renders it. Its SQL is one read-only SELECT
 * whose literals a user would vary are named placeholders `:name`, each a declared query
 * parameter, bound (never spliced) when the endpoint is called.
 */

/** Tool-calling APIs limit function names to 64 characters of this alphabet. */
export const OPERATION_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** `/v1/<dataset>/<db>/<slug>`. */
export const ENDPOINT_PATH = /^\/v1\/[a-z0-9_-]+\/[a-z0-9_-]+\/[a-z0-9_-]+$/;
/** A query parameter / SQL placeholder name. */
export const PARAMETER_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Values an enumerated parameter lists at most, and the longest text one of them may be. */
export const MAX_ENUM_VALUES = 20;
export const MAX_ENUM_TEXT = 500;

export const ParameterSpecSchema = z
  .object({
    name: z.string().regex(PARAMETER_NAME),
    type: z.enum(['string', 'integer', 'number', 'boolean']),
    description: z.string().min(1).max(500),
    required: z.boolean(),
    example: z.union([z.string(), z.number(), z.boolean()]).optional(),
    /** A text parameter compared with a column of dates: the form its values take (parameters.ts checks it). */
    format: z.enum(['date', 'date-time']).optional(),
    /**
     * The only values the parameter takes (a categorical column's values, parameter-values.ts):
     * enforced wherever the parameter's schema is (parameters.ts), and shown in it.
     */
    enum: z
      .array(z.union([z.string().max(MAX_ENUM_TEXT), z.number()]))
      .min(1)
      .max(MAX_ENUM_VALUES)
      .optional(),
    /** Bounds (inclusive) of a numeric parameter's values: enforced and shown as `enum` is. */
    minimum: z.number().optional(),
    maximum: z.number().optional(),
  })
  .strict()
  .superRefine((param, ctx) => {
    const problem = constraintProblem(param);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
export type ParameterSpec = z.infer<typeof ParameterSpecSchema>;

/**
 * Why a parameter's `enum`, `minimum` and `maximum` cannot hold together with its type (a
 * parameter no value could be given for), or undefined: values of the parameter's type (no
 * list of booleans: there are two), bounds on numbers only, in order, and every listed value
 * and the example within them (the example one of the values).
 */
function constraintProblem(param: {
  type: 'string' | 'integer' | 'number' | 'boolean';
  example?: string | number | boolean;
  enum?: (string | number)[];
  minimum?: number;
  maximum?: number;
}): string | undefined {
  const numeric = param.type === 'integer' || param.type === 'number';
  if (!numeric && (param.minimum !== undefined || param.maximum !== undefined))
    return `a ${param.type} parameter has no minimum or maximum`;
  if (param.minimum !== undefined && param.maximum !== undefined && param.minimum > param.maximum)
    return `minimum ${param.minimum} is above maximum ${param.maximum}`;
  const { example } = param;
  if (typeof example === 'number' && (example < (param.minimum ?? -Infinity) || example > (param.maximum ?? Infinity)))
    return `example ${example} is past the parameter's bounds`;
  if (!param.enum) return undefined;
  if (param.type === 'boolean') return 'a boolean parameter lists no values';
  if (example !== undefined && typeof example !== 'boolean' && !param.enum.includes(example))
    return `example ${JSON.stringify(example)} is not one of the parameter's values`;
  const fits = (value: string | number) =>
    param.type === 'string'
      ? typeof value === 'string'
      : typeof value === 'number' &&
        (param.type === 'number' || Number.isSafeInteger(value)) &&
        value >= (param.minimum ?? -Infinity) &&
        value <= (param.maximum ?? Infinity);
  const misfit = param.enum.find((value) => !fits(value));
  if (misfit !== undefined)
    return `enum value ${JSON.stringify(misfit)} is not a value of this ${param.type} parameter`;
  if (new Set(param.enum).size !== param.enum.length) return 'enum lists a value twice';
  return undefined;
}

/** A response field name: snake_case, as a client generator makes a property of it. */
export const FIELD_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** The JSON types a field's values take (SQLite's values: integers, reals, text; BLOBs as `x'<hex>'` text). */
export const FieldTypeSchema = z.enum(['integer', 'number', 'string']);

/**
 * One field of an endpoint's response objects: the query's result column at the same
 * position, named for what it means (response-fields.ts), with the types its values take
 * (declared and observed) and whether it may be null.
 */
export const ResponseFieldSchema = z
  .object({
    name: z.string().regex(FIELD_NAME),
    description: z.string().min(1).max(500),
    types: z.array(FieldTypeSchema).min(1).max(3),
    nullable: z.boolean(),
  })
  .strict();
export type ResponseField = z.infer<typeof ResponseFieldSchema>;

/**
 * What a call answers: one object (the query returns exactly one row: an aggregate without
 * GROUP BY), one object or null (at most one row: LIMIT 1), or a list of objects.
 */
export const ResponseShapeSchema = z.enum(['object', 'object_or_null', 'list']);
export type ResponseShape = z.infer<typeof ResponseShapeSchema>;

/** An endpoint's response as served: its shape and fields, one per result column, in order. */
export const ResponseSpecSchema = z
  .object({
    description: z.string().min(1).max(1000),
    shape: ResponseShapeSchema,
    fields: z.array(ResponseFieldSchema).min(1).max(256),
  })
  .strict();
export type ResponseSpec = z.infer<typeof ResponseSpecSchema>;

export const EndpointSpecSchema = z
  .object({
    operationId: z.string().regex(OPERATION_ID),
    path: z.string().regex(ENDPOINT_PATH),
    summary: z.string().min(1).max(200),
    description: z.string().max(2000),
    parameters: z.array(ParameterSpecSchema).max(32),
    /** One SELECT; `:name` placeholders for the parameters. */
    sql: z.string().min(1).max(20_000),
    /**
     * A synthesizer proposes the description; rest.synthesize adds the shape and fields from
     * the SQL and its trial run. The server serves only endpoints that have them.
     */
    response: z
      .object({
        description: z.string().min(1).max(1000),
        shape: ResponseShapeSchema.optional(),
        fields: z.array(ResponseFieldSchema).min(1).max(256).optional(),
      })
      .strict(),
  })
  .strict();
export type EndpointSpec = z.infer<typeof EndpointSpecSchema>;

/** An endpoint as the server serves it: its response shaped. */
export type ServedEndpointSpec = EndpointSpec & { response: ResponseSpec };

export function isServed(spec: EndpointSpec): spec is ServedEndpointSpec {
  return spec.response.shape !== undefined && spec.response.fields !== undefined;
}

/** An argument value as a query string carries it once parsed by the parameter's type. */
export type ArgumentValue = string | number | boolean;

/** One instance's call of its endpoint (the REST sample's `output`). */
export interface RestCall {
  /** The endpoint's operationId. */
  name: string;
  path: string;
  arguments: Record<string, ArgumentValue>;
}

/** What synthesis produces for one instance. */
export interface SynthesizedEndpoint {
  spec: EndpointSpec;
  call: RestCall;
}
