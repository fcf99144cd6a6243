import type { z } from 'zod';
import { hermesExample, hermesExampleLine, HermesExampleSchema, systemPrompt } from './hermes.js';
import { liveApiBenchExample, LiveApiBenchExampleSchema, liveApiBenchUnsupported } from './live-api-bench.js';
import { nativeExample, NativeExampleSchema } from './native.js';
import {
  chatExample,
  chatExampleLine,
  ChatExampleSchema,
  chatToolJson,
  keyGlossary,
  toolTexts,
} from './openai-chat.js';
import { conversationOf, conversationUnsupported } from './conversation.js';
import type { ExportSample } from './sample.js';
import type { ExampleParts } from './tokens.js';
import { vakraExample, VakraExampleSchema, vakraUnsupported } from './vakra/records.js';
import type { Line } from './writer.js';
import { xlamExample, xlamExampleLine, XlamExampleSchema, xlamToolJson } from './xlam.js';

/**
 * The line formats of `nl2api export`: each a function of an ExportSample to one JSON line,
 * the zod schema every line is checked against before it is written, and (training formats)
 * the parts a model reads, for token statistics. The Hugging Face layout (hf-layout.ts) holds
 * the `nl2api` records as Parquet.
 */

export interface LineFormat<T = unknown> {
  name: string;
  description: string;
  example(sample: ExportSample, index: number): T;
  /** Why the format has no form for this sample (it is left out of this format only, and counted). */
  unsupported?(sample: ExportSample): string | undefined;
  schema: z.ZodType<T>;
  /** The line's text (default: its JSON); formats whose lines share big parts splice their bytes (shared-parts.ts). */
  text?(example: T, sample: ExportSample): Line;
  /**
   * What a model reads of an example, for token statistics: its tool specs and its messages,
   * each as segments (a tool, a line); absent: not a training format.
   */
  parts?(example: T, sample: ExportSample): ExampleParts;
}

const format = <T>(f: LineFormat<T>): LineFormat => f;

export const LINE_FORMATS = [
  format({
    name: 'nl2api',
    description: "nl2api's own sample records, with split, provenance and negatives marked",
    example: nativeExample,
    schema: NativeExampleSchema,
  }),
  format({
    name: 'openai',
    description: 'OpenAI chat fine-tuning JSONL with tools: assistant tool_calls, tool messages, a final answer',
    example: (sample) => chatExample(conversationOf(sample)),
    unsupported: conversationUnsupported,
    schema: ChatExampleSchema,
    text: chatExampleLine,
    parts: (example) => ({
      tools: toolTexts(example),
      messages: example.messages.map((m) => [
        m.role === 'assistant' && m.tool_calls ? JSON.stringify(m.tool_calls) : (m.content ?? ''),
      ]),
    }),
  }),
  format({
    name: 'hermes',
    description: 'Hermes function calling (ShareGPT turns, <tools>, <tool_call>, <tool_response>)',
    example: (sample) => hermesExample(conversationOf(sample)),
    unsupported: conversationUnsupported,
    schema: HermesExampleSchema,
    text: (example, sample) => hermesExampleLine(example, conversationOf(sample)),
    // Per line: the system turn lists one tool per line (its tool specs), a tool turn's output is a line of its own.
    parts: (example, sample) => {
      const [, ...turns] = example.conversations;
      const input = conversationOf(sample);
      return {
        tools: input.tools.map(chatToolJson),
        messages: [systemPrompt(input).frame, ...turns.map((turn) => turn.value.split('\n'))],
      };
    },
  }),
  format({
    name: 'xlam',
    description: 'xLAM / APIGen: query, tools and answers (JSON strings); a negative answers []',
    example: (sample, index) => {
      // A plan: xLAM has no tool responses, so a chain's later hops carry references (eval/chain-references.ts).
      const { question, evidence, plan, tools, keys } = conversationOf(sample);
      // xLAM has no system prompt: the keys' glossary follows the question.
      const query = [
        question,
        ...(evidence ? [`Evidence: ${evidence}`] : []),
        ...(keys.length ? [keyGlossary(keys)] : []),
      ];
      return xlamExample(index, query.join('\n'), plan, tools);
    },
    schema: XlamExampleSchema,
    text: (example, sample) => xlamExampleLine(example, conversationOf(sample).tools),
    parts: (example, sample) => ({
      tools: conversationOf(sample).tools.map(xlamToolJson),
      messages: [[example.query], [example.answers]],
    }),
  }),
  format({
    name: 'live-api-bench',
    description: 'Live API-Bench (SLOT-BIRD, SEL-BIRD, REST-BIRD) samples as published (it has no chains)',
    example: liveApiBenchExample,
    unsupported: liveApiBenchUnsupported,
    schema: LiveApiBenchExampleSchema,
  }),
  format({
    name: 'vakra',
    description:
      "IBM VAKRA's benchmark files: SLOT/SEL as capability 1 (calls in its vocabulary, handles), REST as capability 2, chains as capability 3",
    example: vakraExample,
    unsupported: vakraUnsupported,
    schema: VakraExampleSchema,
  }),
];
