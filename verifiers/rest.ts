import { checkEndpointSpec } from '../generators/rest/format-check.js';
import { valueFitsType } from '../runtime/rest/parameters.js';
import type { SynthesizedEndpoint } from '../runtime/rest/spec.js';
import type { DatabaseInfo, GoldResult, SqlValue, Verdict } from '../core/model.js';
import { compareWithAcceptable, type VariantRun } from './differential.js';

/**
 * The REST checks, one function each (BFCL style): format (the spec and the call),
 * execution (the HTTP response), semantic (the response's rows against the gold under the
 * SLOT/SEL comparison rules). A response the rules cannot compare — shaped differently
 * from the gold — is `semantic:undecidable`: an LLM judge may decide it, else it is rejected.
 */

/** An endpoint's answer as a client sees it: the HTTP status and the JSON body. */
export interface RestResponse {
  status: number;
  body: unknown;
}

interface TableBody {
  columns: string[];
  rows: SqlValue[][];
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

/** 200 with a table body; otherwise the failure the status and the error body name. */
export function checkRestExecution(response: RestResponse): Verdict {
  const message = errorMessage(response.body) ?? `HTTP ${response.status}`;
  if (response.status === 200) {
    return isTable(response.body)
      ? { ok: true, category: 'executed', message: `${response.body.rows.length} rows` }
      : fail('execution:bad_response', 'the response is not {columns, rows}');
  }
  if (response.status === 400) return fail('execution:invalid_parameters', message);
  if (response.status === 504) return fail('execution:timeout', message);
  if (response.status === 500) return fail('execution:sql_error', message);
  return fail(`execution:http_${response.status}`, message);
}

/** The response rows against the gold; `semantic:undecidable` when their shapes differ. */
export function checkRestSemantic(response: RestResponse, gold: GoldResult): Verdict {
  if (!isTable(response.body)) return fail('semantic:not_run', 'no rows to compare');
  const { columns, rows } = response.body;
  if (columns.length !== gold.columns.length) {
    return fail(
      'semantic:undecidable',
      `the response has ${columns.length} column(s) (${columns.join(', ').slice(0, 200)}), the gold answer ${gold.columns.length}: the comparison rules cannot match them`,
    );
  }
  return compareWithAcceptable([{ kind: 'table', columns, rows }], gold);
}

/**
 * A response on a database variant as the differential check compares it; null when only a
 * judge could compare it (its columns are not the gold's: the semantic verdict was the judge's).
 */
export function restVariantRun(variant: string, response: RestResponse, gold: GoldResult): VariantRun | null {
  if (response.status !== 200 || !isTable(response.body))
    return { variant, error: errorMessage(response.body) ?? `HTTP ${response.status}` };
  const { columns, rows } = response.body;
  if (columns.length !== gold.columns.length) return null;
  return { variant, outputs: [{ kind: 'table', columns, rows }] };
}

function isTable(body: unknown): body is TableBody {
  const b = body as Partial<TableBody> | null;
  return typeof b === 'object' && b !== null && Array.isArray(b.columns) && Array.isArray(b.rows);
}

function errorMessage(body: unknown): string | undefined {
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === 'string' ? message : undefined;
}
