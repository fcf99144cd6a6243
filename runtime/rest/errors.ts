import { isExecutorFault, SqlSaturatedError, SqlTimeoutError } from '../sql/executor.js';
import { datePatternText, enumText, InvalidParameterError } from './parameters.js';

/**
 * What a client sees when a request fails: `{error: {code, message}}` with a status.
 * Messages are written here, from the failure's kind: never an exception's own text
 * (which may quote SQL or paths) and never a stack trace; the details go to the server log.
 */

export interface ErrorBody {
  error: { code: string; message: string };
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  /** The failure is ours, not the client's: log it with its details. */
  internal: boolean;
  /** Response headers the failure calls for (Retry-After on a 503). */
  headers?: Record<string, string>;
}

/** An Ajv error as Fastify attaches it to a validation failure (`error.validation`). */
interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

const body = (code: string, message: string): ErrorBody => ({ error: { code, message } });

export function notFound(): ErrorBody {
  return body('not_found', 'No endpoint at this path (see /openapi.json).');
}

/** Seconds a client refused for load is asked to wait (Retry-After): a query's worth. */
export const RETRY_AFTER_S = '1';

/** Too many queries admitted already: the client is to try again (with Retry-After). */
export function saturated(): ErrorBody {
  return body('unavailable', 'The server is busy; try again shortly.');
}

/** The methods every path of the API answers. */
export const ALLOWED_METHODS = 'GET, HEAD';

export function methodNotAllowed(method: string): ErrorBody {
  return body('method_not_allowed', `${clip(method)} is not allowed here: the API is read-only (${ALLOWED_METHODS}).`);
}

/** Fastify's own refusals before routing (a malformed URL): in our format, never echoing the URL. */
export function frameworkError(error: { code?: string }): ErrorResponse {
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'The URL is malformed (an invalid percent-escape in its path?).'
      : 'The request was refused (HTTP 400).';
  return { status: 400, body: body('bad_request', message), internal: false };
}

/**
 * A request Node's HTTP parser refuses before any route sees it: its status and our body, for
 * a raw response on the socket. Request lines and headers (the query string with them) are
 * limited to the server's maximum header size (16 KB by default).
 */
export function clientError(error: { code?: string }): { status: number; reason: string; body: ErrorBody } {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      body: body('request_too_large', 'The URL or headers are too long: keep the query string under 16 KB.'),
    };
  return { status: 400, reason: 'Bad Request', body: body('bad_request', 'The request is not valid HTTP.') };
}

export function toErrorResponse(error: unknown, timeoutMs: number): ErrorResponse {
  const validation = (error as { validation?: ValidationIssue[] } | null)?.validation;
  if (Array.isArray(validation)) {
    return { status: 400, body: body('invalid_parameters', describeIssues(validation)), internal: false };
  }
  if (error instanceof InvalidParameterError) {
    return { status: 400, body: body('invalid_parameters', error.message), internal: false };
  }
  if (error instanceof SqlSaturatedError) {
    // A SQL lane is full (lanes.ts): load, not a fault; like the server's own admission limit.
    return { status: 503, body: saturated(), internal: false, headers: { 'retry-after': RETRY_AFTER_S } };
  }
  if (isExecutorFault(error)) {
    // Our SQL worker died or is shutting down: nothing is wrong with the request; try again.
    return {
      status: 503,
      body: body('unavailable', 'The query could not be run right now; try again.'),
      internal: true,
    };
  }
  if (error instanceof SqlTimeoutError) {
    return {
      status: 504,
      body: body(
        'timeout',
        `The query ran past the ${timeoutMs} ms time limit and was stopped; try narrower parameters.`,
      ),
      internal: true,
    };
  }
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own client errors (malformed URL, body on GET, ...): the status says it all.
    return { status, body: body('bad_request', `The request was refused (HTTP ${status}).`), internal: false };
  }
  return { status: 500, body: body('internal_error', 'The query could not be run.'), internal: true };
}

/**
 * One sentence per problem, naming the parameter but never echoing its value; the first few
 * problems only (a request with a thousand unknown parameters gets a short answer).
 */
function describeIssues(issues: readonly ValidationIssue[]): string {
  const messages = [...new Set(issues.map(describeIssue))];
  const shown = messages.slice(0, MAX_ISSUES).join('; ');
  return messages.length > MAX_ISSUES ? `${shown}; and ${messages.length - MAX_ISSUES} more problems` : shown;
}

/** Problems listed in one error message. */
const MAX_ISSUES = 5;

function describeIssue(issue: ValidationIssue): string {
  const name = clip(issue.instancePath.replace(/^\//, ''));
  switch (issue.keyword) {
    case 'required':
      return `missing required parameter '${clip(String(issue.params.missingProperty))}'`;
    case 'additionalProperties':
      return `unknown parameter '${clip(String(issue.params.additionalProperty))}'`;
    case 'type':
      return `parameter '${name}' must be a single ${String(issue.params.type)} value`;
    case 'encoding':
      return `parameter '${name}' is not valid text (a malformed or non-UTF-8 percent-escape, or a NUL character)`;
    case 'maxLength':
      return `parameter '${name}' must be at most ${String(issue.params.limit)} characters`;
    case 'minimum':
      return `parameter '${name}' must be at least ${String(issue.params.limit)}`;
    case 'maximum':
      return `parameter '${name}' must be at most ${String(issue.params.limit)}`;
    case 'enum':
      return `parameter '${name}' must be one of ${enumText((issue.params.allowedValues as unknown[] | undefined) ?? [])}`;
    case 'pattern':
      return `parameter '${name}' must be ${datePatternText(String(issue.params.pattern)) ?? 'of the form its description gives'}`;
    default:
      return name ? `parameter '${name}' is invalid` : 'invalid query string';
  }
}

/** Parameter names come from the client: keep them short in messages. */
function clip(name: string): string {
  return name.length > 64 ? `${name.slice(0, 61)}...` : name;
}
