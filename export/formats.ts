import type { z } from 'zod';
import { hermesExample, HermesExampleSchema } from './hermes.js';
import { liveApiBenchExample, LiveApiBenchExampleSchema, liveApiBenchUnsupported } from './live-api-bench.js';
import { nativeExample, NativeExampleSchema } from './native.js';
import { chatExample, ChatExampleSchema } from './openai-chat.js';
import { conversationOf, type ExportSample } from './sample.js';
import { xlamExample, XlamExampleSchema } from './xlam.js';

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
  /**
   * What a model reads of an example, for token statistics: its parts (the tool list, each
   * message), each as segments (a tool, a line); absent: not a training format.
   */
  parts?(example: T): string[][];
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
    schema: ChatExampleSchema,
    parts: (example) => [
      example.tools.map((tool) => JSON.stringify(tool)),
      ...example.messages.map((m) => [
        m.role === 'assistant' && m.tool_calls ? JSON.stringify(m.tool_calls) : (m.content ?? ''),
      ]),
    ],
  }),
  format({
    name: 'hermes',
    description: 'Hermes function calling (ShareGPT turns, <tools>, <tool_call>, <tool_response>)',
    example: (sample) => hermesExample(conversationOf(sample)),
    schema: HermesExampleSchema,
    // Per line: the system turn lists one tool per line, a tool turn's output is a line of its own.
    parts: (example) => example.conversations.map((turn) => turn.value.split('\n')),
  }),
  format({
    name: 'xlam',
    description: 'xLAM / APIGen: query, tools and answers (JSON strings); a negative answers []',
    example: (sample, index) => {
      const { question, evidence, calls, tools } = conversationOf(sample);
      return xlamExample(index, evidence ? `${question}\nEvidence: ${evidence}` : question, calls, tools);
    },
    schema: XlamExampleSchema,
    parts: (example) => [toolTexts(example.tools), [example.query], [example.answers]],
  }),
  format({
    name: 'live-api-bench',
    description: 'Live API-Bench (SLOT-BIRD, SEL-BIRD, REST-BIRD) samples as published',
    example: liveApiBenchExample,
    unsupported: liveApiBenchUnsupported,
    schema: LiveApiBenchExampleSchema,
  }),
];

/** An xLAM `tools` string as one text per tool (a database's examples share their tools: parsed once). */
const toolTextsOf = new Map<string, string[]>();
function toolTexts(tools: string): string[] {
  let texts = toolTextsOf.get(tools);
  if (!texts) {
    texts = (JSON.parse(tools) as unknown[]).map((tool) => JSON.stringify(tool));
    if (toolTextsOf.size > 1000) toolTextsOf.clear();
    toolTextsOf.set(tools, texts);
  }
  return texts;
}
