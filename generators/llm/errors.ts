import { UserFacingError } from '../../core/errors.js';
/**
 * Categorized LLM failures. Call failures (timeout, rate limit, server, network, client)
 * come from LlmClient; reply failures (invalid_json, schema) from completeStructured. The
 * categories are stable strings a stage can record as its rejection category and a retry
 * loop can feed back to the next attempt.
 */

export type LlmCallFailure =
  'llm:timeout' | 'llm:rate_limited' | 'llm:server_error' | 'llm:network' | 'llm:client_error';
export type LlmReplyFailure = 'llm:invalid_json' | 'llm:schema';
export type LlmFailureCategory = LlmCallFailure | LlmReplyFailure;

/** The provider's API key is not in the environment: a mistake of the setup, said in one line, not a fault. */
export class MissingApiKeyError extends UserFacingError {
  override name = 'MissingApiKeyError';
}

export class LlmError extends Error {
  override name = 'LlmError';
  constructor(
    readonly category: LlmCallFailure,
    message: string,
    /** The server's Retry-After, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }

  /** 429, 5xx, network errors and timeouts are worth another try; other 4xx are not. */
  get retryable(): boolean {
    return this.category !== 'llm:client_error';
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);
const NETWORK_NAMES = new Set(['ConnectionError', 'APIConnectionError', 'FetchError']);
const TIMEOUT_NAMES = new Set([
  'TimeoutError',
  'RequestTimeoutError',
  'APIConnectionTimeoutError',
  'AbortError',
  'RequestAbortedError',
]);

/**
 * Maps what a provider client threw (Mistral SDK, OpenAI SDK, ollama-js, fetch) to an
 * LlmError, or undefined when it is not a call failure at all (a bug: the caller rethrows
 * it). Only the status, the error's name/code and Retry-After are used: provider messages
 * may echo request data, so the message kept is a short one of our own plus the status.
 */
export function classifyLlmError(error: unknown): LlmError | undefined {
  if (error instanceof LlmError) return error;
  if (!isErrorLike(error)) return undefined;
  const status = statusOf(error);
  if (status === 429) return new LlmError('llm:rate_limited', 'rate limited (HTTP 429)', retryAfterMs(error));
  if (status !== undefined && status >= 500)
    return new LlmError('llm:server_error', `server error (HTTP ${status})`, retryAfterMs(error));
  if (status !== undefined && status >= 400)
    return new LlmError('llm:client_error', `request refused (HTTP ${status}): ${error.message.slice(0, 300)}`);
  if (chain(error).some((e) => TIMEOUT_NAMES.has(e.name)))
    return new LlmError('llm:timeout', `request timed out (${error.name})`);
  if (chain(error).some((e) => NETWORK_NAMES.has(e.name) || NETWORK_CODES.has(codeOf(e)) || isFetchFailure(e))) {
    return new LlmError(
      'llm:network',
      `network error: ${chain(error)
        .map((e) => codeOf(e) || e.name)
        .join(' <- ')}`,
    );
  }
  return undefined;
}

function statusOf(error: Error): number | undefined {
  const e = error as { status?: unknown; statusCode?: unknown; status_code?: unknown; response?: { status?: unknown } };
  for (const candidate of [e.status, e.statusCode, e.status_code, e.response?.status]) {
    if (typeof candidate === 'number' && candidate >= 100 && candidate < 600) return candidate;
  }
  return undefined;
}

/** Retry-After in seconds or as an HTTP date, from a Headers object or a plain record. */
export function retryAfterMs(error: Error, now: number = Date.now()): number | undefined {
  const headers = (error as { headers?: unknown }).headers;
  let value: string | null | undefined;
  if (headers instanceof Headers) value = headers.get('retry-after');
  else if (headers && typeof headers === 'object') {
    const record = headers as Record<string, unknown>;
    const found = Object.keys(record).find((k) => k.toLowerCase() === 'retry-after');
    value = found === undefined ? undefined : String(record[found]);
  }
  return value == null ? undefined : parseRetryAfter(value, now);
}

export function parseRetryAfter(value: string, now: number): number | undefined {
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function chain(error: Error): Error[] {
  const errors: Error[] = [];
  for (let e: unknown = error; isErrorLike(e) && errors.length < 5; e = e.cause) errors.push(e);
  return errors;
}

/** Not `instanceof Error`: fetch's errors come from another realm under some runners (jest's vm). */
function isErrorLike(value: unknown): value is Error {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Error).name === 'string' &&
    typeof (value as Error).message === 'string'
  );
}

function codeOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
}

/** undici's fetch reports every transport failure as `TypeError: fetch failed`. */
function isFetchFailure(error: Error): boolean {
  return error.name === 'TypeError' && error.message === 'fetch failed';
}
