import { isDeepStrictEqual } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { answerLabelsOf } from '../eval/answer-labels.js';
import type { EvalItem } from '../eval/dataset.js';
import { LABEL_META } from './server.js';

/**
 * A published sample replayed through an MCP client (issue 14's check of `nl2api mcp`): in
 * the client's session, its starting tables, then its gold calls, each under its own label;
 * the outputs of its answer calls compared with the sample's recorded output.
 */

export interface Replay {
  calls: number;
  /** Every answer output equal to the recorded one. */
  equal: boolean;
  /** Why not: the failing call's tool error, or the first label whose output differs. */
  problem?: string;
}

export async function replaySample(client: Client, item: EvalItem): Promise<Replay> {
  const outputs = new Map<string, unknown>();
  let calls = 0;
  for (const call of [...item.initialization, ...item.goldCalls]) {
    const result = await client.callTool({
      name: call.name,
      arguments: call.arguments,
      ...(call.label ? { _meta: { [LABEL_META]: call.label } } : {}),
    });
    calls++;
    const text = (result.content as { type: string; text?: string }[])[0]?.text ?? '';
    if (result.isError) return { calls, equal: false, problem: `${call.name}: ${text}` };
    outputs.set(String(result._meta?.[LABEL_META]), JSON.parse(text));
  }
  for (const [label, answer] of recordedAnswers(item))
    if (!isDeepStrictEqual(outputs.get(label), answer)) return { calls, equal: false, problem: `${label} differs` };
  return { calls, equal: true };
}

/** The sample's recorded answer, by the label of the call that gives it: one sink's output, or each sink's part. */
export function recordedAnswers(item: EvalItem): Map<string, unknown> {
  const published = item.published as { answer_labels?: string[]; output_after_executing_api?: unknown };
  const answer = published.output_after_executing_api;
  if (item.formulation === 'rest') return new Map([[item.goldCalls[0]?.label || 'CALL_1', answer]]);
  const labels = answerLabelsOf(item);
  if (labels.length === 1) return new Map([[labels[0], answer]]);
  const parts = Array.isArray(answer) ? answer : [];
  return new Map(labels.map((label, i) => [label, parts[i]]));
}
