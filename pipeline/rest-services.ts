import path from 'node:path';
import { cacheDirOf } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createLlmSynthesizer } from '../generators/rest/agent.js';
import { applyVerifiedMerges, dedupAgentFingerprint, proposeMerges } from '../generators/rest/dedup-agent.js';
import { templateSynthesizer } from '../generators/rest/synthesis.js';
import { createChatModel } from '../generators/llm/chat-model.js';
import { LlmClient } from '../generators/llm/client.js';
import type { LlmConfig } from '../generators/llm/config.js';
import { SqliteLlmCache } from '../generators/llm/sqlite-cache.js';
import { UsageMeter } from '../generators/llm/usage.js';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { runEndpoint } from '../runtime/rest/endpoint.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import { createLlmJudge } from '../verifiers/llm-judge.js';
import type { RestServices } from './runner/rest.js';
import type { DedupAgent } from './stages/rest-dedup.js';

/**
 * REST's synthesizer, judge and dedup agent as the config asks for them: without an `llm`
 * block, the template synthesizer alone (no judge, no agent); with one, the LLM agent with
 * the template as fallback, the LLM judge and the de-duplication agent, all through one
 * LlmClient (one reply cache in the run's cache directory, one rate limit, one usage meter).
 */
export interface RestServiceHandle {
  services: RestServices;
  /** The run's LLM usage, when an LLM is configured. */
  usage: UsageMeter | null;
  close(): void;
}

export interface RestServiceOptions {
  /** Default: createChatModel(config.llm) — tests pass a scripted model. */
  model?: BaseChatModel;
  env?: NodeJS.ProcessEnv;
}

export function restServices(config: Config, executor: SqlExecutor, options: RestServiceOptions = {}): RestServiceHandle {
  const llm = config.llm;
  const useLlm = config.rest.synthesizer === 'llm' || (config.rest.synthesizer === 'auto' && llm !== undefined);
  if (config.rest.synthesizer === 'llm' && !llm) throw new Error('rest.synthesizer is "llm" but no llm is configured');
  if (!llm) {
    return { services: { synthesizer: templateSynthesizer, fallback: null, judge: null, dedupAgent: null, dedupFingerprint: null }, usage: null, close: () => {} };
  }
  const usage = new UsageMeter(llm.prices);
  const cache = new SqliteLlmCache(path.join(cacheDirOf(config), 'llm-cache.sqlite'));
  const client = new LlmClient({ model: options.model ?? createChatModel(llm, options.env), config: llm, cache, usage });
  const providerLabel = `${llm.provider}/${llm.model}`;
  const synthesizer = useLlm ? createLlmSynthesizer(client, { batchSize: config.rest.batchSize, providerLabel }) : templateSynthesizer;
  return {
    services: {
      synthesizer,
      fallback: useLlm && config.rest.templateFallback ? templateSynthesizer : null,
      judge: config.rest.judge ? createLlmJudge(client, { providerLabel }) : null,
      dedupAgent: config.rest.dedupAgent ? llmDedupAgent(client, executor, config) : null,
      dedupFingerprint: config.rest.dedupAgent ? { prompts: dedupAgentFingerprint(), llm: llmIdentity(llm) } : null,
    },
    usage,
    close: () => cache.close(),
  };
}

/** The agent proposes; only merges that execution proves identical are applied. */
function llmDedupAgent(client: LlmClient, executor: SqlExecutor, config: Config): DedupAgent {
  return {
    async refine(result, db) {
      const { proposals } = await proposeMerges(client, result.canonical, db.dbId);
      if (proposals.length === 0) return result;
      const run = (spec: Parameters<typeof runEndpoint>[0], args: Parameters<typeof runEndpoint>[1]) =>
        runEndpoint(spec, args, db, executor, config.executeTimeoutMs).catch(() => null);
      const { canonical, calls, merges } = await applyVerifiedMerges(result, proposals, run);
      return { canonical, calls, merges };
    },
  };
}

function llmIdentity(llm: LlmConfig): unknown {
  return { provider: llm.provider, model: llm.model, temperature: llm.temperature, maxTokens: llm.maxTokens ?? null };
}
