import type { ToolCall } from '../../core/model.js';
import { sameValue } from './alignment.js';

/**
 * ReAct loop statistics, as Live API-Bench reports them for its agents: how many
 * Thought-Action-Observation turns an agent takes, how often it runs out of its turn budget
 * without a final answer, and how often it is stuck: on an item it fails, it makes the same
 * call (tool and arguments) at least twice in a row.
 */

export interface ReactTrace {
  /** Turns taken (each an action or the final answer). */
  turns: number;
  budget: number;
  /** The agent gave a final answer within the budget. */
  answered: boolean;
  /** Its answer equals the gold answer. */
  completed: boolean;
  calls: readonly Pick<ToolCall, 'name' | 'arguments'>[];
}

export interface ReactStats {
  averageLoops: number;
  outOfBudgetRate: number;
  stuckRate: number;
}

export function reactStats(traces: readonly ReactTrace[]): ReactStats {
  if (traces.length === 0) return { averageLoops: 0, outOfBudgetRate: 0, stuckRate: 0 };
  const share = (test: (t: ReactTrace) => boolean) => traces.filter(test).length / traces.length;
  return {
    averageLoops: traces.reduce((n, t) => n + t.turns, 0) / traces.length,
    outOfBudgetRate: share((t) => !t.answered && t.turns >= t.budget),
    stuckRate: share((t) => !t.completed && repeatsACall(t.calls)),
  };
}

function repeatsACall(calls: ReactTrace['calls']): boolean {
  return calls.some((c, i) => i > 0 && c.name === calls[i - 1].name && sameValue(c.arguments, calls[i - 1].arguments));
}
