import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load.js';
import { templateWriter } from '../generators/chain/question-writer.js';
import { templateSynthesizer } from '../generators/rest/synthesis.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import type { RestServiceHandle, RestServiceOptions } from './rest-service-types.js';

/** LangChain and the providers' SDKs take most of a second to load: only runs with an LLM load them. */
export async function restServices(
  config: Config,
  executor: SqlExecutor,
  options: RestServiceOptions = {},
): Promise<RestServiceHandle> {
  for (const [setting, value] of [
    ['rest.synthesizer', config.rest.synthesizer],
    ['chain.writer', config.chain.writer],
  ])
    if (value === 'llm' && !config.llm)
      throw new ConfigError(
        `${setting} is "llm" but no llm is configured (--llm-provider, or an llm block in the config file)`,
      );
  if (!config.llm) {
    return {
      services: {
        synthesizer: templateSynthesizer,
        fallback: null,
        judge: null,
        dedupAgent: null,
        dedupFingerprint: null,
        chainWriter: templateWriter,
      },
      usage: null,
      close: () => {},
    };
  }
  const { llmRestServices } = await import('./rest-llm-services.js');
  return llmRestServices(config, config.llm, executor, options);
}
