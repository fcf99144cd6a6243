import { isDeepStrictEqual } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { recordedOutputs } from '../eval/answer-labels.js';
import { plannedChain } from '../eval/chain-references.js';
import type { EvalItem } from '../eval/dataset.js';
import { LABEL_META, READ_OUTPUT } from './server.js';

/**
 * A published sample replayed through an MCP client (issue 14's check of `nl2api mcp`): in
 * the client's session, its starting tables, then its gold calls, each under its own label (a
 * chain's later hops take their values by reference to the earlier responses, as a client
 * that does not read them would: eval/chain-references.ts); the outputs of its answer calls
 * (every hop of a chain) compared with the sample's recorded output. An answer the
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
  const outputs: unknown[] = [];
  let calls = 0;
  let reads = 0;
  const gold = item.hops ? plannedChain(item.goldCalls, item.hops, (k) => item.goldCalls[k - 1].label) : item.goldCalls;
  for (const call of [...item.initialization, ...gold]) {
    const result = await client.callTool({
      name: call.name,
      arguments: call.arguments,
      ...(call.label ? { _meta: { [LABEL_META]: call.label } } : {}),
    });
    calls++;
    const text = textOf(result);
    if (result.isError) return { calls, reads, equal: false, problem: `${call.name}: ${text}` };
    outputs.push(JSON.parse(text));
  }
  const first = item.initialization.length;
  for (const [i, answer] of recordedOutputs(item)) {
    const label = item.goldCalls[i]?.label || `CALL_${i + 1}`;
    let output = outputs[first + i];
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
