import type { BaseMessage } from '@langchain/core/messages';
import { lazy } from '../../core/lazy.js';

/** A native tool call as plain data (what a provider returned, or what an assistant turn carried). */
export interface LlmToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** A chat message as plain data: hashable for the cache, serializable into prompts' records. */
export type LlmMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  /** The result of a native tool call, answering the assistant turn's call `toolCallId`. */
  | { role: 'tool'; content: string; toolCallId: string };

/**
 * LangChain's message classes, loaded when a model is first called: @langchain/core (and
 * langsmith beneath it, ~250 modules) cost a process ~0.5 CPU-s to load, and most processes
 * (a run without an LLM, a worker, a server, each test file) never call one.
 */
const messageClasses = lazy(() => import('@langchain/core/messages'));

export async function toLangChainMessages(messages: readonly LlmMessage[]): Promise<BaseMessage[]> {
  const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = await messageClasses();
  return messages.map((m) => {
    switch (m.role) {
      case 'system':
        return new SystemMessage(m.content);
      case 'user':
        return new HumanMessage(m.content);
      case 'assistant':
        return m.toolCalls?.length
          ? new AIMessage({
              content: m.content,
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                name: c.name,
                args: c.args,
                type: 'tool_call' as const,
              })),
            })
          : new AIMessage(m.content);
      case 'tool':
        return new ToolMessage({ content: m.content, tool_call_id: m.toolCallId });
    }
  });
}
