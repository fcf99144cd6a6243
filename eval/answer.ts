import type { GoldResult, ToolCall, ToolOutput, Verdict } from '../core/model.js';
import { compareWithAcceptable } from '../verifiers/differential.js';
import { answerTable, checkRestSemantic, type RestResponse } from '../verifiers/rest.js';
import { ToolError } from '../runtime/slot/errors.js';
import { SqlExecutionError, SqlTimeoutError } from '../runtime/sql/executor.js';
import type { Episode, StepResult } from './environment.js';
import { unconsumedLabels } from './answer-labels.js';

/**
 * Which outputs of a model's calls are its answer, and whether that answer is the gold's
 * (completion), under the pipeline's own comparison rules (verifiers/compare.ts).
 *
 * A tool sequence's answer is the outputs no later call consumed, in call order: the
 * published samples' `answer_labels` are exactly those (every SLOT and SEL sample of BIRD
 * dev holds to it), so a model need not name its answer. A REST answer is the last
 * successful response.
 */

export interface ExecutedCall {
  call: ToolCall;
  result: StepResult;
}

/**
 * The verdict on a model's executed calls: `answerLabels` when the model named its answer
 * (a ReAct final answer), else the unconsumed outputs of the successful calls.
 */
export async function judgeAnswer(
  executed: readonly ExecutedCall[],
  gold: GoldResult,
  episode: Pick<Episode, 'answer'>,
  answerLabels?: readonly string[],
): Promise<Verdict> {
  const succeeded = executed.filter((e) => e.result.ok);
  if (succeeded.length === 0)
    return { ok: false, category: 'no_answer', message: executed.length ? 'every call failed' : 'no calls' };
  const byLabel = new Map(succeeded.map((e) => [e.call.label, (e.result as Extract<StepResult, { ok: true }>).output]));
  const rest = succeeded.some((e) => 'status' in (e.result as Extract<StepResult, { ok: true }>).output);
  const labels = answerLabels?.length
    ? answerLabels
    : rest
      ? [succeeded[succeeded.length - 1].call.label]
      : unconsumedLabels(succeeded.map((e) => e.call));
  const missing = labels.find((label) => !byLabel.has(label));
  if (missing)
    return {
      ok: false,
      category: 'no_answer',
      message: `the answer names "${missing}", no call of that label succeeded`,
    };
  if (rest) return judgeRest(byLabel.get(labels[labels.length - 1]) as RestResponse, gold);
  // Calls' outputs are previews (their first rows): a sequence's answer is always run whole.
  if (!episode.answer) throw new Error('a tool-sequence episode computes its answer');
  try {
    return judgeOutputs(
      await episode.answer(
        succeeded.map((e) => e.call),
        labels,
      ),
      gold,
    );
  } catch (error) {
    if (error instanceof ToolError || error instanceof SqlExecutionError || error instanceof SqlTimeoutError)
      return { ok: false, category: 'execution:answer', message: error.message };
    throw error;
  }
}

/** Tool outputs against the gold; an empty gold answer (whose width nothing published records) is matched by any empty answer. */
export function judgeOutputs(outputs: ToolOutput[], gold: GoldResult): Verdict {
  return compareWithAcceptable(outputs, widthOf(gold, outputs));
}

function judgeRest(response: RestResponse, gold: GoldResult): Verdict {
  const read = response.status === 200 ? answerTable(response.body) : null;
  // An empty list or null names no fields: "no rows", of the gold's width (one column when that is unknown too).
  const width = Math.max(1, gold.columns.length);
  const table =
    read && read.columns.length === 0
      ? { ...read, columns: Array.from({ length: width }, (_, i) => `column_${i + 1}`) }
      : read;
  return checkRestSemantic(table, widthOf(gold, table ? [table] : []));
}

function widthOf(gold: GoldResult, outputs: readonly ToolOutput[]): GoldResult {
  if (gold.rows.length > 0 || gold.acceptable?.some((rows) => rows.length > 0)) return gold;
  const width = outputs.reduce((n, o) => n + (o.kind === 'table' ? o.columns.length : 1), 0);
  return { ...gold, columns: Array.from({ length: width }, (_, i) => `column_${i + 1}`) };
}
