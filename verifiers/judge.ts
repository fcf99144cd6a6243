import type { GoldResult, Verdict } from '../core/model.js';

/**
 * The answer judge of REST verification: where the deterministic comparison cannot decide
 * (a response shaped differently from the gold: extra or renamed columns, a sentence), a
 * judge says whether the response answers the question as the ground truth does. The LLM
 * judge (llm-judge.ts) is the only implementation; without one such samples are rejected
 * as `semantic:undecidable`.
 */

export interface JudgeInput {
  question: string;
  evidence: string;
  gold: GoldResult;
  /** The endpoint's response body (`{columns, rows}` from our server). */
  response: unknown;
}

/**
 * `semantic:judge_yes` (accepted) / `semantic:judge_no`; a judge call that failed is
 * `semantic:judge_failed` with the LLM failure in the message.
 */
export interface JudgeVerdict extends Verdict {
  rationale: string;
}

export interface AnswerJudge {
  /** Recorded with the verdicts, e.g. `llm:mistral/mistral-large-latest`. */
  readonly name: string;
  /** Prompt texts, model and params: part of the verify cache key. */
  readonly fingerprint: unknown;
  judge(input: JudgeInput): Promise<JudgeVerdict>;
}
