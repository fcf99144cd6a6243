import type { GoldResult, ToolOutput, Verdict } from '../core/model.js';
import { compareWithAcceptable } from './differential.js';

/**
 * Semantic check: the answer outputs (in answer-label order) are the gold result under the
 * rules of `compare.ts` (any of its acceptable answers, for a nondeterministic gold kept). Only deterministic: an LLM judge, where wanted, runs on the
 * `semantic:*` rejections this returns.
 */
export function checkSemantic(outputs: ToolOutput[], gold: GoldResult): Verdict {
  return compareWithAcceptable(outputs, gold);
}
