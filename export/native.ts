import { z } from 'zod';
import { FORMULATIONS } from '../core/model.js';
import { REFUSAL } from './negatives.js';
import type { ExportSample } from './sample.js';
import { SPLIT_NAMES } from './splits.js';

/**
 * nl2api's own sample records as an export line: the published sample as generated, with the
 * split it fell in and where it came from. A negative keeps the question and gold (what was
 * asked) but expects no call: `output` is empty, `expected_reply` the refusal, and `tools`
 * names what it offers instead.
 */

const CallSchema = z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }).loose();

export const NativeExampleSchema = z
  .object({
    sample_id: z.string().min(1),
    dataset_name: z.string().min(1),
    formulation: z.enum(FORMULATIONS),
    input: z.string().min(1),
    evidence: z.string(),
    query: z.string().min(1),
    gold_answer: z.array(z.array(z.union([z.string(), z.number(), z.null()]))),
    output: z.array(CallSchema),
    source: z.string().min(1),
    db_id: z.string().min(1),
    split: z.enum(SPLIT_NAMES),
    copy: z.number().int().min(0),
    negative: z.boolean(),
    expected_reply: z.string().optional(),
    tools: z.array(z.string()).optional(),
  })
  .loose()
  .superRefine((example, ctx) => {
    if (example.negative && (example.output.length > 0 || !example.expected_reply))
      ctx.addIssue({ code: 'custom', message: 'a negative expects no call and a refusal' });
  });

export type NativeExample = z.infer<typeof NativeExampleSchema>;

export function nativeExample(sample: ExportSample): NativeExample {
  const published = sample.item.published as NativeExample;
  return {
    ...published,
    source: sample.source.name,
    db_id: sample.item.db,
    split: sample.split,
    copy: sample.copy,
    negative: sample.negative,
    ...(sample.negative
      ? {
          output: [],
          answer_labels: [],
          output_after_executing_api: null,
          expected_reply: REFUSAL,
          tools: sample.tools.map((tool) => tool.function.name),
        }
      : {}),
  };
}
