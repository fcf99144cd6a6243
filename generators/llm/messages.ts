import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';

/** A chat message as plain data: hashable for the cache, serializable into prompts' records. */
export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export function toLangChainMessages(messages: readonly LlmMessage[]): BaseMessage[] {
  return messages.map((m) => {
    switch (m.role) {
      case 'system':
        return new SystemMessage(m.content);
      case 'user':
        return new HumanMessage(m.content);
      case 'assistant':
        return new AIMessage(m.content);
    }
  });
}
