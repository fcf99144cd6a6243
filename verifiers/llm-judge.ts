import { z } from 'zod';
import type { LlmClient } from '../generators/llm/client.js';
import { completeWithOneRetry, YesNoVerdict, type StructuredResult } from '../generators/llm/structured.js';
import { clip } from '../generators/rest/naming.js';
import { loadPrompt } from '../generators/rest/prompts.js';
import type { AnswerJudge, JudgeInput, JudgeVerdict } from './judge.js';

/**
 * The LLM answer judge (judge.ts), in the spirit of the paper's: question, evidence,
 * ground truth and response in; `{"verdict": "yes"|"no", "rationale": ...}` out. The reply
 * is data: parsed and schema-checked, never executed. A reply that cannot be read gets one
 * more try with feedback; a call that fails after the client's own retries is
 * `semantic:judge_failed`, so the sample is rejected rather than guessed.
 */

export interface LlmJudgeOptions {
  /** `<provider>/<model>`: the judge's name is `llm:<providerLabel>`. */
  providerLabel: string;
}

/** Rows shown per table: enough to judge a shape, bounded for huge results. */
const MAX_ROWS = 50;
const MAX_ROW_CHARS = 300;
/** A response body that is not a table is shown as JSON, cut here. */
const MAX_BODY_CHARS = 4000;
/** Kept in the verdict's record; the message carries a shorter cut. */
const MAX_RATIONALE_CHARS = 1000;
const MESSAGE_RATIONALE_CHARS = 300;

type JudgeReply = z.infer<typeof YesNoVerdict>;

export function createLlmJudge(client: LlmClient, options: LlmJudgeOptions): AnswerJudge {
  const prompt = loadPrompt('rest-judge');
  return {
    name: `llm:${options.providerLabel}`,
    fingerprint: { system: prompt.system, user: prompt.user, providerLabel: options.providerLabel },
    async judge(input) {
      return toVerdict(await completeWithOneRetry(client, prompt.render(promptSlots(input)), YesNoVerdict));
    },
  };
}

/**
 * One retry, with the usual feedback, for a reply that could not be read; call failures
 * (timeout, 5xx, …) are not retried again here: the client already did.
 */
function toVerdict(reply: StructuredResult<JudgeReply>): JudgeVerdict {
  if (!reply.ok)
    return {
      ok: false,
      category: 'semantic:judge_failed',
      message: `${reply.category}: ${reply.message}`,
      rationale: '',
    };
  const { verdict, rationale } = reply.value;
  const message = `judge: ${verdict} — ${clip(rationale, MESSAGE_RATIONALE_CHARS) || '(no rationale)'}`;
  return {
    ok: verdict === 'yes',
    category: `semantic:judge_${verdict}`,
    message,
    rationale: clip(rationale, MAX_RATIONALE_CHARS),
  };
}

function promptSlots({ question, evidence, gold, response }: JudgeInput): Record<string, string> {
  const order = gold.ordered ? 'row order matters' : 'row order does not matter';
  return {
    question,
    evidence: evidence.trim() || '(none)',
    gold_shape: `${gold.rows.length} row(s) × ${gold.columns.length} column(s); ${order}`,
    gold: renderTable(gold.columns, gold.rows),
    response: isTable(response)
      ? renderTable(response.columns, response.rows)
      : clip(JSON.stringify(response) ?? '(no body)', MAX_BODY_CHARS),
  };
}

/** Column names, then one JSON array per row: unambiguous for strings, numbers and NULL alike. */
function renderTable(columns: readonly unknown[], rows: readonly unknown[][]): string {
  const shown = rows.slice(0, MAX_ROWS).map((row) => clip(JSON.stringify(row), MAX_ROW_CHARS));
  const more = rows.length > MAX_ROWS ? [`… (${rows.length} rows in total, the first ${MAX_ROWS} shown)`] : [];
  return [`columns: ${JSON.stringify(columns)}`, ...(rows.length ? shown : ['(no rows)']), ...more].join('\n');
}

function isTable(body: unknown): body is { columns: unknown[]; rows: unknown[][] } {
  const b = body as { columns?: unknown; rows?: unknown } | null;
  return (
    typeof b === 'object' &&
    b !== null &&
    Array.isArray(b.columns) &&
    Array.isArray(b.rows) &&
    b.rows.every(Array.isArray)
  );
}
