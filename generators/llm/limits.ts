import type { LlmConfig } from './config.js';

/**
 * How hard a client may press its model server. A hosted API is shared and metered: without
 * a setting, 60 requests a minute and 4 in flight, which its free tiers allow. A server on
 * this machine (vLLM, llama.cpp, Ollama, a scripted test server) is the user's own: without a
 * setting, no limit but the run's own concurrency, since a local server throttled to one
 * request a second leaves its GPU idle. A setting in the config always wins.
 */

export interface LlmLimits {
  /** null: none. */
  requestsPerMinute: number | null;
  concurrency: number;
  /** The limits were chosen for a server on loopback. */
  local: boolean;
}

const HOSTED_LIMITS = { requestsPerMinute: 60, concurrency: 4 } as const;
/** The schema's bound: in effect, the caller's own concurrency decides. */
const LOCAL_CONCURRENCY = 256;

export function llmLimits(
  config: Pick<LlmConfig, 'provider' | 'baseUrl' | 'requestsPerMinute' | 'concurrency'>,
): LlmLimits {
  const local = isLocalServer(config);
  return {
    requestsPerMinute: config.requestsPerMinute ?? (local ? null : HOSTED_LIMITS.requestsPerMinute),
    concurrency: config.concurrency ?? (local ? LOCAL_CONCURRENCY : HOSTED_LIMITS.concurrency),
    local,
  };
}

/** "60 requests/min, 4 in flight (hosted defaults: ...)": what a run prints before it asks. */
export function describeLimits(
  config: Pick<LlmConfig, 'provider' | 'baseUrl' | 'requestsPerMinute' | 'concurrency'>,
): string {
  const limits = llmLimits(config);
  const rate = limits.requestsPerMinute === null ? 'no request-rate limit' : `${limits.requestsPerMinute} requests/min`;
  const flight =
    limits.local && config.concurrency === undefined ? 'no in-flight limit' : `${limits.concurrency} in flight`;
  const origin =
    config.requestsPerMinute !== undefined && config.concurrency !== undefined
      ? 'as configured'
      : limits.local
        ? 'a server on this machine; set llm.requestsPerMinute / llm.concurrency to limit it'
        : 'hosted defaults; set llm.requestsPerMinute / llm.concurrency to change them';
  return `${rate}, ${flight} (${origin})`;
}

/** A base URL on loopback, or Ollama's default (http://127.0.0.1:11434). */
function isLocalServer(config: Pick<LlmConfig, 'provider' | 'baseUrl'>): boolean {
  if (!config.baseUrl) return config.provider === 'ollama';
  let host: string;
  try {
    host = new URL(config.baseUrl).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
