import path from 'node:path';
import { cacheDirOf } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { LlmConfig } from '../generators/llm/config.js';
import { createChatModel } from '../generators/llm/chat-model.js';
import { LlmClient } from '../generators/llm/client.js';
import { SqliteLlmCache } from '../generators/llm/sqlite-cache.js';
import { UsageMeter } from '../generators/llm/usage.js';
import { llmWriter, templateWriter } from '../generators/chain/question-writer.js';
import { createLlmSynthesizer } from '../generators/rest/agent.js';
import { applyVerifiedMerges, dedupAgentFingerprint, proposeMerges } from '../generators/rest/dedup-agent.js';
import { templateSynthesizer } from '../generators/rest/synthesis.js';
import { runEndpoint } from '../runtime/rest/endpoint.js';
import { fallbackUnlessExecutorFault, type SqlExecutor } from '../runtime/sql/executor.js';
import { createLlmJudge } from '../verifiers/llm-judge.js';
import type { DedupAgent, RestServiceHandle, RestServiceOptions } from './rest-service-types.js';

/**
 * REST's services with an LLM: the LLM agent (the template as its fallback), the judge, the
 * dedup agent and the chains' question writer, all through one LlmClient — one reply cache in the run's cache
 * directory, one rate limit, one usage meter. Loaded only by runs with an LLM (rest-services.ts).
 */
export async function llmRestServices(
  config: Config,
  llm: LlmConfig,
  executor: SqlExecutor,
  options: RestServiceOptions,
): Promise<RestServiceHandle> {
  const useLlm = config.rest.synthesizer !== 'template';
  const usage = new UsageMeter(llm.prices);
  const file = options.shared ? null : new SqliteLlmCache(path.join(cacheDirOf(config), 'llm-cache.sqlite'));
  const client = new LlmClient({
    model: options.model ?? (await createChatModel(llm, options.env)),
    config: llm,
    cache: options.shared?.cache ?? file!,
    rateLimiter: options.shared?.rateLimiter,
    usage,
  });
  const providerLabel = `${llm.provider}/${llm.model}`;
  return {
    services: {
      synthesizer: useLlm
        ? createLlmSynthesizer(client, { batchSize: config.rest.batchSize, providerLabel })
        : templateSynthesizer,
      fallback: useLlm && config.rest.templateFallback ? templateSynthesizer : null,
      judge: config.rest.judge ? createLlmJudge(client, { providerLabel }) : null,
      dedupAgent: config.rest.dedupAgent ? llmDedupAgent(client, executor, config) : null,
      dedupFingerprint: config.rest.dedupAgent ? { prompts: dedupAgentFingerprint(), llm: llmIdentity(llm) } : null,
      chainWriter:
        config.chain.writer === 'template'
          ? templateWriter
          : llmWriter(client, { providerLabel, judge: config.chain.judge }),
    },
    usage,
    close: () => file?.close(),
  };
}

/** The agent proposes; only merges that execution proves identical are applied. */
function llmDedupAgent(client: LlmClient, executor: SqlExecutor, config: Config): DedupAgent {
  return {
    async refine(result, db) {
      const { proposals } = await proposeMerges(client, result.canonical, db.dbId);
      if (proposals.length === 0) return result;
      // A statement that fails refutes the merge; a lost SQL worker refutes nothing: thrown through, so no dedup is cached.
      const run = (spec: Parameters<typeof runEndpoint>[0], args: Parameters<typeof runEndpoint>[1]) =>
        runEndpoint(spec, args, db, executor, config.executeTimeoutMs).catch(fallbackUnlessExecutorFault(null));
      const { canonical, calls, merges } = await applyVerifiedMerges(result, proposals, run);
      return { canonical, calls, merges };
    },
  };
}

function llmIdentity(llm: LlmConfig): unknown {
  return { provider: llm.provider, model: llm.model, temperature: llm.temperature, maxTokens: llm.maxTokens ?? null };
}
