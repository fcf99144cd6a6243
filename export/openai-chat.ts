import { z } from 'zod';
import type { SqlValue, ToolCall, ToolSpec } from '../core/model.js';
import { perObject } from '../core/per-object.js';
import { bytesOf, checkedOncePerObject, listPieces } from './shared-parts.js';
import type { Piece } from './writer.js';

/**
 * A sample as an OpenAI chat fine-tuning conversation with function calling (issue 13): the
 * tools, a system prompt, the question, then per call an assistant turn calling one tool and
 * the tool's real output, and a final assistant answer in words, written from the gold
 * answer. A call's id is its label, so a later call's `"$LABEL$"` argument names the tool call
 * whose output it uses, as the system prompt says.
 */

export const ChatToolCallSchema = z
  .object({
    id: z.string().min(1),
    type: z.literal('function'),
    function: z.object({ name: z.string().min(1), arguments: z.string() }).strict(),
  })
  .strict();

export const ChatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }).strict(),
  z.object({ role: z.literal('user'), content: z.string() }).strict(),
  z
    .object({
      role: z.literal('assistant'),
      content: z.string().nullable().optional(),
      tool_calls: z.array(ChatToolCallSchema).min(1).optional(),
    })
    .strict(),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: z.string() }).strict(),
]);

const ChatToolSchema = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: z.string(),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()),
      })
      .strict(),
  })
  .strict();

/** One line of an OpenAI chat fine-tuning file with tools. */
export const ChatExampleSchema = z
  .object({
    messages: z.array(ChatMessageSchema).min(3),
    tools: z.array(checkedOncePerObject(ChatToolSchema)),
    parallel_tool_calls: z.boolean().optional(),
  })
  .strict()
  .superRefine((example, ctx) => {
    // Every tool message answers a call made before it, and every call is answered.
    const open = new Set<string>();
    for (const message of example.messages) {
      if (message.role === 'assistant') for (const call of message.tool_calls ?? []) open.add(call.id);
      if (message.role === 'tool' && !open.delete(message.tool_call_id))
        ctx.addIssue({ code: 'custom', message: `tool message for an unknown call ${message.tool_call_id}` });
    }
    if (open.size > 0) ctx.addIssue({ code: 'custom', message: `calls never answered: ${[...open].join(', ')}` });
  });

export type ChatExample = z.infer<typeof ChatExampleSchema>;

export interface ConversationInput {
  question: string;
  evidence: string;
  /** Where the data starts (SLOT/SEL: the initialization labels); empty for REST. */
  startLabels: readonly string[];
  calls: readonly ToolCall[];
  /**
   * The calls as one plan, for a format with no tool responses (xLAM): a chain's bridged
   * arguments as references to the earlier hops (eval/chain-references.ts); else `calls`.
   */
  plan: readonly ToolCall[];
  /** Each call's output as JSON, in call order (what the tool returned when the sample was exported). */
  outputs: readonly unknown[];
  tools: readonly ToolSpec[];
  /** SLOT/SEL: one line per key the tools take (conversation-tools.ts), said once in the prompt. */
  keys: readonly string[];
  /** The final answer in words (answerInWords of the gold answer; a negative's refusal). */
  answer: string;
}

export function chatExample(input: ConversationInput): ChatExample {
  const system = [
    'You answer questions about a database by calling the tools you are given, one call at a time.',
    input.startLabels.length
      ? `The data is in ${input.startLabels.map((l) => `"$${l}$"`).join(', ')}. A later call uses an earlier call's output by passing "$<id of that call>$" as an argument.`
      : '',
  ]
    .filter(Boolean)
    .join(' ')
    .concat(input.keys.length ? `\n${keyGlossary(input.keys)}` : '');
  const messages: ChatExample['messages'] = [
    { role: 'system', content: system },
    { role: 'user', content: input.evidence ? `${input.question}\nEvidence: ${input.evidence}` : input.question },
  ];
  input.calls.forEach((call, i) => {
    const id = call.label || `call_${i + 1}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(input.outputs[i] ?? null) });
  });
  messages.push({ role: 'assistant', content: input.answer });
  return {
    messages,
    tools: input.tools.map(chatTool),
    parallel_tool_calls: false,
  };
}

/** The keys the tools take, each described once (the tools' key arguments list only their names). */
export const keyGlossary = (keys: readonly string[]): string =>
  `The keys (columns) the tools take:\n${keys.join('\n')}`;

type ChatTool = ChatExample['tools'][number];

/** A tool as the format lists it: one object per spec, so that lines offering the same spec share it. */
const chatTool = perObject((spec: ToolSpec): ChatTool => ({ type: 'function', function: spec.function }));

/** A listed tool's JSON text, once per tool. */
const chatToolText = perObject((tool: ChatTool) => JSON.stringify(tool));

/** A spec's JSON text as the format lists it, once per spec (the Hermes system prompt lists the same text). */
export const chatToolJson = (spec: ToolSpec): string => chatToolText(chatTool(spec));

/** A listed tool's bytes as a line holds them, once per tool. */
const chatToolBytes = perObject((tool: ChatTool) => bytesOf(chatToolText(tool)));

/** A line, its tools spliced from their bytes (each encoded once per export). */
export function chatExampleLine(example: ChatExample): Piece[] {
  const { tools, ...rest } = example;
  return listPieces(`${JSON.stringify(rest).slice(0, -1)},"tools":[`, tools.map(chatToolBytes), ']}');
}

/** The texts of a line's tools (its token count reads them). */
export const toolTexts = (example: ChatExample): string[] => example.tools.map(chatToolText);

/** The most rows an answer in words lists before saying how many more there are. */
const MAX_ROWS = 20;

/** A gold answer as a sentence: one value, a list of values, or rows of values. */
export function answerInWords(rows: readonly (readonly SqlValue[])[]): string {
  if (rows.length === 0) return 'There is no such data: the answer is empty.';
  const value = (v: SqlValue) => (v === null ? 'none' : String(v));
  if (rows.length === 1 && rows[0].length === 1) return `The answer is ${value(rows[0][0])}.`;
  const shown = rows
    .slice(0, MAX_ROWS)
    .map((row) => (row.length === 1 ? value(row[0]) : `(${row.map(value).join(', ')})`));
  const more = rows.length > MAX_ROWS ? `, and ${rows.length - MAX_ROWS} more` : '';
  return `The answer has ${rows.length} ${rows.length === 1 ? 'row' : 'rows'}: ${shown.join('; ')}${more}.`;
}
