import http from 'node:http';
import https from 'node:https';
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
  let response: { status: number; text: string };
  try {
    // The server stops the query at timeoutMs and answers 504; the margin is for the answer to arrive.
    response = await get(url, timeoutMs + 10_000);
  } catch (error) {
    throw new TransientError(`GET ${call.path} failed: ${(error as Error).message}`);
  }
  const { status, text } = response;
  if (status === 503) throw new TransientError(`GET ${call.path}: HTTP 503 ${text.slice(0, 200)}`);
  try {
    return { status, body: JSON.parse(text) };
  } catch {
    return { status, body: { error: { code: 'not_json', message: text.slice(0, 200) } } };
  }
}

/**
 * Kept-alive connections, shared by every call. A run starts a server on a port of its own
 * per database: node's agents let go of a server once its connections close, where the
 * global fetch's dispatcher keeps a pool per origin for the life of the process (~26 KB each).
 * An idle connection is closed before any server would (node's servers: after 5 s), so a
 * call never goes out on one the server is closing (a reset, not an answer).
 */
const IDLE_MS = 4_000;
const agents = {
  'http:': { module: http, agent: new http.Agent({ keepAlive: true, timeout: IDLE_MS }) },
  'https:': { module: https, agent: new https.Agent({ keepAlive: true, timeout: IDLE_MS }) },
};

function get(url: URL, timeoutMs: number): Promise<{ status: number; text: string }> {
  const client = agents[url.protocol as keyof typeof agents];
  if (!client) return Promise.reject(new Error(`unsupported protocol ${url.protocol}`));
  return new Promise((resolve, reject) => {
    const request = client.module.get(
      url,
      { agent: client.agent, signal: AbortSignal.timeout(timeoutMs) },
      (response) => {
        response.setEncoding('utf8');
        let text = '';
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
}
