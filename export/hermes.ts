import { z } from 'zod';
import type { ToolSpec } from '../core/model.js';
import { chatToolJson, keyGlossary, type ConversationInput } from './openai-chat.js';
import { perObject } from '../core/per-object.js';
import { escapedBytesOf, escapedText, perText } from './shared-parts.js';
import type { Piece } from './writer.js';

/**
 * A sample in the Hermes function-calling format (NousResearch's hermes-function-calling,
 * ChatML roles in ShareGPT form, as LLaMA-Factory and Axolotl read it): a system turn with the
 * tool signatures in `<tools></tools>`, the question, then per call a `gpt` turn with a
 * `<tool_call>` block and a `tool` turn with its real output in `<tool_response>`, and the
 * final answer in words.
 */

const TurnSchema = z.object({ from: z.enum(['system', 'human', 'gpt', 'tool']), value: z.string() }).strict();

export const HermesExampleSchema = z
  .object({ conversations: z.array(TurnSchema).min(3) })
  .strict()
  .superRefine(({ conversations }, ctx) => {
    const issue = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (conversations[0].from !== 'system' || !listsTools(conversations[0].value))
      issue('the first turn is the system turn with <tools>…</tools>');
    if (conversations[1].from !== 'human') issue('the second turn is the question');
    conversations.forEach((turn, i) => {
      const calls = turn.from === 'gpt' && /<tool_call>/.test(turn.value);
      if (calls) {
        for (const block of turn.value.matchAll(/<tool_call>\n([\s\S]*?)\n<\/tool_call>/g)) {
          const call = JSON.parse(block[1]) as { name?: unknown; arguments?: unknown };
          if (typeof call.name !== 'string' || typeof call.arguments !== 'object')
            issue(`turn ${i}: a tool call is {"name", "arguments"}`);
        }
        if (conversations[i + 1]?.from !== 'tool') issue(`turn ${i}: a tool call is followed by its tool response`);
      }
      if (turn.from === 'tool' && !/^<tool_response>\n[\s\S]*\n<\/tool_response>$/.test(turn.value))
        issue(`turn ${i}: a tool turn is one <tool_response> block`);
    });
    const last = conversations[conversations.length - 1];
    if (last.from !== 'gpt' || /<tool_call>/.test(last.value)) issue('the last turn is the answer');
  });

export type HermesExample = z.infer<typeof HermesExampleSchema>;

/** A system turn with its `<tools>…</tools>` block (checked once per prompt: the samples of a tool list share theirs). */
const listsTools = perText((system: string) => /<tools>[\s\S]*<\/tools>/.test(system));

export function hermesExample(input: ConversationInput): HermesExample {
  const conversations: HermesExample['conversations'] = [
    { from: 'system', value: systemPrompt(input).text },
    { from: 'human', value: input.evidence ? `${input.question}\nEvidence: ${input.evidence}` : input.question },
  ];
  input.calls.forEach((call, i) => {
    const written = { name: call.name, arguments: call.arguments, ...(call.label ? { label: call.label } : {}) };
    conversations.push({ from: 'gpt', value: `<tool_call>\n${JSON.stringify(written)}\n</tool_call>` });
    conversations.push({
      from: 'tool',
      value: `<tool_response>\n${JSON.stringify(input.outputs[i] ?? null)}\n</tool_response>`,
    });
  });
  conversations.push({ from: 'gpt', value: input.answer });
  return { conversations };
}

/** A line, its system turn spliced from the bytes of its tool lines (escaped and encoded once per tool). */
export function hermesExampleLine(example: HermesExample, input: ConversationInput): Piece[] {
  const [, ...turns] = example.conversations;
  return [
    '{"conversations":[{"from":"system","value":',
    ...systemPrompt(input).json,
    `}${turns.map((turn) => `,${JSON.stringify(turn)}`).join('')}]}`,
  ];
}

/**
 * The system turn as text (one line per tool between `<tools>` and `</tools>`), its lines but the tools', and as
 * a JSON string's pieces: once per tool list and start.
 */
export function systemPrompt({
  tools,
  startLabels,
  keys,
}: Pick<ConversationInput, 'tools' | 'startLabels' | 'keys'>): SystemPrompt {
  const byStart = promptsOf(tools);
  const start = [...startLabels, '', ...keys].join('\u0000');
  let prompt = byStart.get(start);
  if (!prompt) {
    const { head, tail } = promptFrame(startLabels, keys);
    const lines = [...head, ...tools.map(chatToolJson), ...tail];
    const json = [
      `"${escapedText(head.join('\n'))}`,
      ...tools.flatMap((tool) => ['\\n', escapedTool(tool)]),
      `\\n${escapedText(tail.join('\n'))}"`,
    ];
    byStart.set(start, (prompt = { frame: [...head, ...tail], text: lines.join('\n'), json }));
  }
  return prompt;
}

interface SystemPrompt {
  text: string;
  /** Its lines but the tools' (one a tool). */
  frame: string[];
  /** The text as a JSON string, in pieces. */
  json: Piece[];
}

const promptsOf = perObject<readonly ToolSpec[], Map<string, SystemPrompt>>(() => new Map());

const escapedTool = perObject((tool: ToolSpec) => escapedBytesOf(chatToolJson(tool)));

/** The prompt's lines before its tools (ending with `<tools>`) and after them (from `</tools>`). */
function promptFrame(startLabels: readonly string[], keys: readonly string[]): { head: string[]; tail: string[] } {
  return {
    head: [
      'You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags.',
      'You may call one function at a time to answer the user query; its result comes back in <tool_response></tool_response>.',
      ...(startLabels.length
        ? [
            `The data is in ${startLabels.map((l) => `"$${l}$"`).join(', ')}. Give each call a "label"; a later call uses an earlier call's output by passing "$LABEL$" as an argument.`,
          ]
        : []),
      ...(keys.length ? keyGlossary(keys).split('\n') : []),
      '<tools>',
    ],
    tail: [
      '</tools>',
      'For each function call return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
      '<tool_call>',
      '{"name": <function-name>, "arguments": <args-dict>}',
      '</tool_call>',
    ],
  };
}
