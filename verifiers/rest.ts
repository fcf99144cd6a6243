import { checkEndpointSpec } from '../generators/rest/format-check.js';
import { valueFitsType } from '../runtime/rest/parameters.js';
import { isServed, type EndpointSpec, type SynthesizedEndpoint } from '../runtime/rest/spec.js';
import { rowsOfBody } from '../runtime/rest/response.js';
import type { DatabaseInfo, GoldResult, ToolOutput, Verdict } from '../core/model.js';
import { compareWithAcceptable, type VariantRun } from './differential.js';

/**
 * The REST checks, one function each (BFCL style): format (the spec and the call),
 * execution (the HTTP response, of the shape and fields the endpoint declares), semantic (its
 * rows, fields mapped back to columns by position, against the gold under the SLOT/SEL
 * comparison rules). A response the rules cannot compare — shaped differently from the
 * gold — is `semantic:undecidable`: an LLM judge may decide it, else it is rejected.
 */

/** An endpoint's answer as a client sees it: the HTTP status and the JSON body. */
export interface RestResponse {
  status: number;
  body: unknown;
}

const fail = (category: string, message: string): Verdict => ({ ok: false, category, message });

/** The spec passes the endpoint format check and the call fits the spec. */
export function checkRestFormat(endpoint: SynthesizedEndpoint, db: DatabaseInfo, maxStringLength: number): Verdict {
  const spec = checkEndpointSpec(endpoint.spec, db);
  if (!spec.ok) return spec;
  const {
    spec: { operationId, path, parameters },
    call,
  } = endpoint;
  if (call.name !== operationId || call.path !== path)
    return fail(
      'format:call',
      `the call names ${call.name} at ${call.path}, the endpoint is ${operationId} at ${path}`,
    );
  const declared = new Map(parameters.map((p) => [p.name, p]));
  for (const [name, value] of Object.entries(call.arguments)) {
    const param = declared.get(name);
    if (!param) return fail('format:arguments', `argument ${name} is not a parameter of ${operationId}`);
    if (!valueFitsType(value, param.type))
      return fail(
        'format:arguments',
        `argument ${name} is not of type ${param.type}: ${JSON.stringify(value).slice(0, 80)}`,
      );
    if (typeof value === 'string' && value.length > maxStringLength)
      return fail('format:arguments', `argument ${name} is longer than ${maxStringLength} characters`);
  }
  const missing = parameters.find((p) => p.required && !Object.hasOwn(call.arguments, p.name));
  return missing
    ? fail('format:arguments', `required argument ${missing.name} is missing`)
    : { ok: true, category: 'format:ok', message: 'spec and call well-formed' };
}

/** 200 with a body of the endpoint's response shape and fields; otherwise the failure the status and the error body name. */
export function checkRestExecution(response: RestResponse, spec: EndpointSpec): Verdict {
  const message = errorMessage(response.body) ?? `HTTP ${response.status}`;
  if (response.status === 200) {
    const table = servedTable(response.body, spec);
    return table
      ? { ok: true, category: 'executed', message: `${table.rows.length} rows` }
      : fail('execution:bad_response', `the response is not ${expectedBody(spec)}`);
  }
  if (response.status === 400) return fail('execution:invalid_parameters', message);
  if (response.status === 504) return fail('execution:timeout', message);
  if (response.status === 500) return fail('execution:sql_error', message);
  return fail(`execution:http_${response.status}`, message);
}

/** The response rows (a table: `servedTable` or `answerTable`) against the gold; `semantic:undecidable` when their shapes differ. */
export function checkRestSemantic(table: Table | null, gold: GoldResult): Verdict {
  if (!table) return fail('semantic:not_run', 'no rows to compare');
  const { columns } = table;
  if (columns.length !== gold.columns.length) {
    return fail(
      'semantic:undecidable',
      `the response has ${columns.length} field(s) (${columns.join(', ').slice(0, 200)}), the gold answer ${gold.columns.length} column(s): the comparison rules cannot match them`,
    );
  }
  return compareWithAcceptable([table], gold);
}

/**
 * A response on a database variant as the differential check compares it; null when only a
 * judge could compare it (its fields are not the gold's columns: the semantic verdict was the judge's).
 */
export function restVariantRun(
  variant: string,
  response: RestResponse,
  spec: EndpointSpec,
  gold: GoldResult,
): VariantRun | null {
  const table = response.status === 200 ? servedTable(response.body, spec) : null;
  if (!table) return { variant, error: errorMessage(response.body) ?? `HTTP ${response.status}` };
  if (table.columns.length !== gold.columns.length) return null;
  return { variant, outputs: [table] };
}

type Table = Extract<ToolOutput, { kind: 'table' }>;

/** A body as the endpoint serves it: its fields (names, in order), in its shape; null otherwise. */
export function servedTable(body: unknown, spec: EndpointSpec): Table | null {
  if (!isServed(spec)) return null;
  const rows = rowsOfBody(spec.response, body);
  return rows && { kind: 'table', columns: spec.response.fields.map((field) => field.name), rows };
}

/**
 * A body read without its spec (an agent's last answer in evaluation): one object, null, or
 * a list of objects with the same keys, read in key order; null for anything else.
 */
export function answerTable(body: unknown): Table | null {
  const objects = body === null ? [] : Array.isArray(body) ? body : [body];
  const first = objects[0] as unknown;
  if (objects.length && (typeof first !== 'object' || first === null || Array.isArray(first))) return null;
  const columns = objects.length ? Object.keys(first as object) : [];
  const response = {
    description: 'answer',
    shape: 'list' as const,
    fields: columns.map((name) => ({ name, description: name, types: ['string' as const], nullable: true })),
  };
  const rows = columns.length ? rowsOfBody(response, objects) : [];
  return rows && { kind: 'table', columns, rows };
}

function expectedBody(spec: EndpointSpec): string {
  const fields = spec.response.fields?.map((field) => field.name).join(', ') ?? '';
  switch (spec.response.shape) {
    case 'object':
      return `one object with the fields ${fields}`;
    case 'object_or_null':
      return `one object with the fields ${fields}, or null`;
    case 'list':
      return `a list of objects with the fields ${fields}`;
    default:
      return 'a response the endpoint declares (it has no response fields)';
  }
}

function errorMessage(body: unknown): string | undefined {
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === 'string' ? message : undefined;
}
