import { isExecutorFault, SqlTimeoutError } from '../sql/executor.js';
import { InvalidParameterError } from './parameters.js';

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
}

/** An Ajv error as Fastify attaches it to a validation failure (`error.validation`). */
interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

const body = (code: string, message: string): ErrorBody => ({ error: { code, message } });

export function notFound(): ErrorBody {
  return body('not_found', 'No endpoint at this path (GET only; see /openapi.json).');
}

export function toErrorResponse(error: unknown, timeoutMs: number): ErrorResponse {
  const validation = (error as { validation?: ValidationIssue[] } | null)?.validation;
  if (Array.isArray(validation)) {
    return { status: 400, body: body('invalid_parameters', describeIssues(validation)), internal: false };
  }
  if (error instanceof InvalidParameterError) {
    return { status: 400, body: body('invalid_parameters', error.message), internal: false };
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

/** One sentence per problem, naming the parameter but never echoing its value. */
function describeIssues(issues: readonly ValidationIssue[]): string {
  const messages = issues.map(describeIssue);
  return [...new Set(messages)].join('; ');
}

function describeIssue(issue: ValidationIssue): string {
  const name = clip(issue.instancePath.replace(/^\//, ''));
  switch (issue.keyword) {
    case 'required':
      return `missing required parameter '${clip(String(issue.params.missingProperty))}'`;
    case 'additionalProperties':
      return `unknown parameter '${clip(String(issue.params.additionalProperty))}'`;
    case 'type':
      return `parameter '${name}' must be a single ${String(issue.params.type)} value`;
    case 'maxLength':
      return `parameter '${name}' must be at most ${String(issue.params.limit)} characters`;
    case 'minimum':
    case 'maximum':
      return `parameter '${name}' is out of range`;
    default:
      return name ? `parameter '${name}' is invalid` : 'invalid query string';
  }
}

/** Parameter names come from the client: keep them short in messages. */
function clip(name: string): string {
  return name.length > 64 ? `${name.slice(0, 61)}...` : name;
}
