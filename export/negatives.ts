import { hashJson } from '../core/hash.js';
import type { ToolCall, ToolSpec } from '../core/model.js';
import { mulberry32 } from '../core/random.js';
import { judgeAnswer } from '../eval/answer.js';
import type { EvalItem } from '../eval/dataset.js';
import type { Episode, StepResult } from '../eval/environment.js';

/**
 * Negatives (APIGen's and BFCL's "relevance" items): a variant of a question whose tools
 * cannot answer it, whose expected output is no call and a refusal. Its tool universe lacks
 * the gold's tools and, for REST, every endpoint of the database that returns the gold answer
 * for the question's arguments, found by calling it. Which questions get one is a seeded draw
 * per question, so the same export gives the same negatives.
 */

export const REFUSAL = 'None of the tools I have can answer this question, so I cannot answer it.';

export function hasNegative(unit: string, share: number, seed: number): boolean {
  if (share <= 0) return false;
  return mulberry32(parseInt(hashJson(['negative', seed, unit]).slice(0, 8), 16))() < share;
}

export function withoutTools(tools: readonly ToolSpec[], excluded: ReadonlySet<string>): ToolSpec[] {
  return tools.filter((tool) => !excluded.has(tool.function.name));
}

/**
 * The endpoint calls a dataset's negatives made, and their results: a read-only API answers
 * the same request alike, and the negatives of a database try many of the same (each of its
 * endpoints that needs no argument, for every one of them).
 */
export type TriedCalls = Map<string, Promise<StepResult>>;

/** `episode`, answering a call it was given before (for the same database) from `tried`. */
export function rememberingCalls(episode: Pick<Episode, 'call'>, db: string, tried: TriedCalls): Pick<Episode, 'call'> {
  return {
    call: (call) => {
      const key = JSON.stringify([db, call.name, call.arguments]);
      let result = tried.get(key);
      if (!result) {
        tried.set(key, (result = episode.call(call)));
        result.catch(() => tried.delete(key)); // a fault of ours is not the endpoint's answer: tried again
      }
      return result;
    },
  };
}

/**
 * The endpoints of `candidates` that answer the item: called with the gold call's arguments
 * (those an endpoint takes; one that needs any other is not tried), an endpoint whose response
 * is the gold answer answers it.
 */
export async function answeringEndpoints(
  item: EvalItem,
  candidates: readonly ToolSpec[],
  episode: Pick<Episode, 'call'>,
): Promise<Set<string>> {
  const answering = new Set(item.goldCalls.map((call) => call.name));
  const given = Object.assign({}, ...item.goldCalls.map((call) => call.arguments)) as Record<string, unknown>;
  for (const tool of candidates) {
    if (answering.has(tool.function.name)) continue;
    const parameters = tool.function.parameters as { properties?: Record<string, unknown>; required?: string[] };
    if ((parameters.required ?? []).some((name) => !(name in given))) continue;
    const call: ToolCall = {
      name: tool.function.name,
      arguments: Object.fromEntries(
        Object.keys(parameters.properties ?? {}).flatMap((n) => (n in given ? [[n, given[n]]] : [])),
      ),
      label: '',
    };
    const result = await episode.call(call);
    if (!result.ok) continue;
    const verdict = await judgeAnswer([{ call, result }], item.gold, {});
    if (verdict.ok) answering.add(tool.function.name);
  }
  return answering;
}
