import type { BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import type { Clock } from '../../generators/llm/clock.js';
import { MemoryLlmCache } from '../../generators/llm/cache.js';
import { LlmClient } from '../../generators/llm/client.js';
import { LlmConfigSchema, type LlmConfig, type LlmConfigInput } from '../../generators/llm/config.js';

export function llmConfig(overrides: LlmConfigInput = {}): LlmConfig {
  return LlmConfigSchema.parse({
    model: 'test-model',
    maxRetries: 3,
    backoff: { baseMs: 100, maxMs: 1000 },
    ...overrides,
  });
}

/** Time that passes only when someone sleeps; records every sleep. */
export class FakeClock implements Clock {
  time = 0;
  readonly sleeps: number[] = [];
  now(): number {
    return this.time;
  }
  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.time += ms;
  }
}

/** An error shaped like the provider SDKs' HTTP errors (status + Headers). */
export function httpError(status: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`Status ${status}`), { statusCode: status, headers: new Headers(headers) });
}

export type Step = string | Error;

/**
 * LangChain's FakeListChatModel, scripted step by step: a string is a reply, an Error is
 * thrown. Records the messages of every call, the peak number of calls in flight, and
 * reports token usage like a real provider.
 */
export class ScriptedChatModel extends FakeListChatModel {
  readonly received: BaseMessage[][] = [];
  inFlight = 0;
  maxInFlight = 0;

  constructor(
    private readonly steps: Step[],
    private readonly options: { sleep?: number; usage?: { input: number; output: number } } = {},
  ) {
    super({ responses: ['unused'], sleep: options.sleep });
  }

  get calls(): number {
    return this.received.length;
  }

  override async _generate(messages: BaseMessage[], options?: this['ParsedCallOptions']): Promise<ChatResult> {
    const step = this.steps[Math.min(this.received.length, this.steps.length - 1)];
    this.received.push(messages);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (step instanceof Error) throw step;
      this.responses = [step];
      this.i = 0;
      const result = await super._generate(messages, { ...options, stop: undefined });
      const { usage } = this.options;
      if (usage) {
        const message = result.generations[0].message as { usage_metadata?: unknown };
        message.usage_metadata = {
          input_tokens: usage.input,
          output_tokens: usage.output,
          total_tokens: usage.input + usage.output,
        };
      }
      return result;
    } finally {
      this.inFlight--;
    }
  }
}

/** A client over a scripted model, with no cache carried between tests and time that passes only when slept. */
export function scriptedClient(
  steps: Step[],
  overrides: LlmConfigInput = {},
): { model: ScriptedChatModel; client: LlmClient } {
  const model = new ScriptedChatModel(steps);
  const client = new LlmClient({
    model,
    config: llmConfig(overrides),
    cache: new MemoryLlmCache(),
    clock: new FakeClock(),
  });
  return { model, client };
}
