import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { LlmCache } from '../generators/llm/cache.js';
import type { RateLimiter } from '../generators/llm/rate-limiter.js';
import type { UsageMeter } from '../generators/llm/usage.js';
import type { QuestionWriter } from '../generators/chain/question-writer.js';
import type { Synthesizer } from '../generators/rest/synthesis.js';
import type { AnswerJudge } from '../verifiers/judge.js';
import type { DedupResult } from '../generators/rest/dedup.js';
import type { DatabaseInfo } from '../core/model.js';

export interface DedupAgent {
  /** Further merges of `result`'s endpoints; each one verified, never merely proposed. */
  refine(result: DedupResult, db: DatabaseInfo): Promise<DedupResult>;
}

export interface RestServices {
  synthesizer: Synthesizer;
  /** Tried once after the synthesizer's last failed attempt (the template, behind an LLM). */
  fallback: Synthesizer | null;
  judge: AnswerJudge | null;
  dedupAgent: DedupAgent | null;
  /** What besides the synthesized endpoints decides dedup (the agent's model and prompts): part of output keys. */
  dedupFingerprint: unknown;
  /** Who writes the chains' questions (the chain formulation is made of REST's samples). */
  chainWriter: QuestionWriter;
}

/**
 * REST's synthesizer, judge and dedup agent as the config asks for them: without an `llm`
 * block, the template synthesizer alone (no judge, no agent); with one, the LLM services
 * (rest-llm-services.ts).
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
  /** The reply cache and rate limit shared by every worker (the queue backend's, in Redis); default: a cache file in the cache dir, a limit of this process. */
  shared?: { cache: LlmCache; rateLimiter: RateLimiter };
}
