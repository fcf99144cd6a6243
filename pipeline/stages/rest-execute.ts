import type { RestCall } from '../../runtime/rest/spec.js';
import type { RestResponse } from '../../verifiers/rest.js';
import { TransientError } from '../../core/outcome.js';

/**
 * execute for REST: the instance's call, made over HTTP against the live server (the
 * arguments as a query string, as any client would send them). A response of any status is
 * data for the execution check, but 503: the server's SQL machinery failed, which says
 * nothing about the call (runtime/rest/errors.ts). That, and no response at all, is transient.
 */
export async function callOverHttp(baseUrl: string, call: RestCall, timeoutMs: number): Promise<RestResponse> {
  const url = new URL(call.path, baseUrl);
  for (const [name, value] of Object.entries(call.arguments)) url.searchParams.set(name, String(value));
  let response: Response;
  try {
    // The server stops the query at timeoutMs and answers 504; the margin is for the answer to arrive.
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs + 10_000) });
  } catch (error) {
    throw new TransientError(`GET ${call.path} failed: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (response.status === 503) throw new TransientError(`GET ${call.path}: HTTP 503 ${text.slice(0, 200)}`);
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: { error: { code: 'not_json', message: text.slice(0, 200) } } };
  }
}
