import { isDeepStrictEqual } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { answerLabelsOf } from '../eval/answer-labels.js';
import type { EvalItem } from '../eval/dataset.js';
import { LABEL_META, READ_OUTPUT } from './server.js';

/**
 * A published sample replayed through an MCP client (issue 14's check of `nl2api mcp`): in
 * the client's session, its starting tables, then its gold calls, each under its own label;
 * the outputs of its answer calls compared with the sample's recorded output. An answer the
 * server previewed (longer than its rows) is read whole by its handle (`read_output`); the
 * other calls' outputs stay on the server, as a model's would.
 */

export interface Replay {
  /** The sample's calls. */
  calls: number;
  /** `read_output` calls: the pages of the previewed answers. */
  reads: number;
  /** Every answer output equal to the recorded one. */
  equal: boolean;
  /** Why not: the failing call's tool error, or the first label whose output differs. */
  problem?: string;
}

/** Rows a page of an answer asks for: an answer is read in one page (more pages if it is longer). */
const PAGE = 1_000_000;

export async function replaySample(client: Client, item: EvalItem): Promise<Replay> {
  const outputs = new Map<string, unknown>();
  let calls = 0;
  let reads = 0;
  for (const call of [...item.initialization, ...item.goldCalls]) {
    const result = await client.callTool({
      name: call.name,
      arguments: call.arguments,
      ...(call.label ? { _meta: { [LABEL_META]: call.label } } : {}),
    });
    calls++;
    const text = textOf(result);
    if (result.isError) return { calls, reads, equal: false, problem: `${call.name}: ${text}` };
    outputs.set(String(result._meta?.[LABEL_META]), JSON.parse(text));
  }
  for (const [label, answer] of recordedAnswers(item)) {
    let output = outputs.get(label);
    if (isPreview(output)) {
      const rows: unknown[] = [];
      for (let more = true; more;) {
        const result = await client.callTool({
          name: READ_OUTPUT,
          arguments: { handle: output.handle, offset: rows.length, limit: PAGE },
        });
        reads++;
        if (result.isError)
          return { calls, reads, equal: false, problem: `${READ_OUTPUT} ${label}: ${textOf(result)}` };
        const page = JSON.parse(textOf(result)) as { rows: unknown[]; more: boolean };
        rows.push(...page.rows);
        more = page.more && page.rows.length > 0;
      }
      output = rows;
    }
    if (!isDeepStrictEqual(output, answer)) return { calls, reads, equal: false, problem: `${label} differs` };
  }
  return { calls, reads, equal: true };
}

/** A SLOT or SEL output the server previewed (a plain output is a value, a list or a list of records, never an object). */
export function isPreview(output: unknown): output is { handle: string; count: number; first: unknown[]; more: true } {
  return (
    typeof output === 'object' &&
    output !== null &&
    !Array.isArray(output) &&
    typeof (output as { handle?: unknown }).handle === 'string' &&
    (output as { more?: unknown }).more === true
  );
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text?: string }[])[0]?.text ?? '';
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
