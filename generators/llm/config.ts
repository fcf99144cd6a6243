import { z } from 'zod';
import { PROVIDER_NAMES } from './providers.js';

/**
 * The LLM knobs (to be embedded in config/schema.ts as `llm`). The API key is deliberately
 * absent: it comes from the environment only (the variable its PROVIDERS entry names), so it can
 * never end up in a config file, a manifest, a log line or a cache key.
 */

/** The names of PROVIDERS (providers.ts). */
export const LlmProviderSchema = z.enum(PROVIDER_NAMES);
export type LlmProvider = z.infer<typeof LlmProviderSchema>;

/** USD per million tokens. */
export const ModelPriceSchema = z
  .object({
    inputPerMTok: z.number().min(0),
    outputPerMTok: z.number().min(0),
  })
  .strict();
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

export const LlmConfigSchema = z
  .object({
    /** A PROVIDERS entry: mistral (default; the paper used Mistral-Large), openai (any OpenAI-compatible server), ollama. */
    provider: LlmProviderSchema.default('mistral'),
    model: z.string().min(1).default('mistral-large-latest'),
    temperature: z.number().min(0).max(2).default(0),
    /** Maximum tokens of a reply (provider default when absent). */
    maxTokens: z.number().int().min(1).optional(),
    /** Server base URL (provider default when absent; its form per provider: providers.ts). */
    baseUrl: z.url().optional(),
    /** Per request; the request is aborted when it runs out. */
    timeoutMs: z.number().int().min(1).default(60_000),
    /** Our retries (LangChain's and the SDKs' own are disabled) on 429, 5xx and network errors. */
    maxRetries: z.number().int().min(0).max(20).default(4),
    backoff: z
      .object({
        /** First retry delay; doubled per attempt, full jitter, capped at maxMs. */
        baseMs: z.number().int().min(0).default(1000),
        maxMs: z.number().int().min(0).default(30_000),
      })
      .strict()
      .default({ baseMs: 1000, maxMs: 30_000 }),
    /** Requests in flight at once (default: 4 for a hosted API, none for a server on loopback: limits.ts). */
    concurrency: z.number().int().min(1).max(256).optional(),
    /** Default: 60 for a hosted API, none for a server on loopback (limits.ts). */
    requestsPerMinute: z.number().int().min(1).optional(),
    /** Requests let through at once after an idle spell (default: one minute's worth). 1: evenly spaced. */
    burst: z.number().int().min(1).optional(),
    /** Price per model name, for cost accounting (models not listed cost 0 and are reported as unpriced). */
    prices: z.record(z.string(), ModelPriceSchema).default({}),
    /** false: always call the model (replies are still written to the cache). */
    cache: z.boolean().default(true),
  })
  .strict();

export type LlmConfig = z.infer<typeof LlmConfigSchema>;
export type LlmConfigInput = z.input<typeof LlmConfigSchema>;
