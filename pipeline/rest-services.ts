import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load.js';
import { templateSynthesizer } from '../generators/rest/synthesis.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import type { RestServiceHandle, RestServiceOptions } from './rest-service-types.js';

/** LangChain and the providers' SDKs take most of a second to load: only runs with an LLM load them. */
export async function restServices(
  config: Config,
  executor: SqlExecutor,
  options: RestServiceOptions = {},
): Promise<RestServiceHandle> {
  if (config.rest.synthesizer === 'llm' && !config.llm)
    throw new ConfigError(
      'rest.synthesizer is "llm" but no llm is configured (--llm-provider, or an llm block in the config file)',
    );
  if (!config.llm) {
    return {
      services: {
        synthesizer: templateSynthesizer,
        fallback: null,
        judge: null,
        dedupAgent: null,
        dedupFingerprint: null,
      },
      usage: null,
      close: () => {},
    };
  }
  const { llmRestServices } = await import('./rest-llm-services.js');
  return llmRestServices(config, config.llm, executor, options);
}
