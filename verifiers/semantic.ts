import type { GoldResult, ToolOutput, Verdict } from '../core/model.js';
import { compareWithGold } from './compare.js';

/**
 * Semantic check: the answer outputs (in answer-label order) are the gold result under the
 * rules of `compare.ts`. Only deterministic: an LLM judge, where wanted, runs on the
 * `semantic:*` rejections this returns.
 */
export function checkSemantic(outputs: ToolOutput[], gold: GoldResult): Verdict {
  return compareWithGold(outputs, gold);
}
