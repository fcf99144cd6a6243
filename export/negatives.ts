import { hashJson } from '../core/hash.js';
import type { DatabaseInfo, GoldResult, ToolCall, ToolOutput, ToolSpec } from '../core/model.js';
import { mulberry32 } from '../core/random.js';
import { judgeAnswer } from '../eval/answer.js';
import type { EvalItem } from '../eval/dataset.js';
import type { Episode, StepResult } from '../eval/environment.js';
import { keysForInitialization } from '../runtime/slot/specs.js';
import type { RestResponse } from '../verifiers/rest.js';
import { sequenceRule } from './negative-coverage.js';

/**
 * Negatives (APIGen's and BFCL's "relevance" items): a variant of a question whose tools
 * cannot answer it, whose expected output is no call and a refusal. Which questions get one
 * is a seeded draw per question, so the same export gives the same negatives. What a negative
 * offers is its question's tools less every tool that answers it or could (`negativeOf`), and
 * a question for which that cannot be made sure of gets no negative (the verdict says why).
 */

export const REFUSAL = 'None of the tools I have can answer this question, so I cannot answer it.';

export function hasNegative(unit: string, share: number, seed: number): boolean {
  if (share <= 0) return false;
  return mulberry32(parseInt(hashJson(['negative', seed, unit]).slice(0, 8), 16))() < share;
}

export function withoutTools(tools: readonly ToolSpec[], excluded: ReadonlySet<string>): ToolSpec[] {
  return tools.filter((tool) => !excluded.has(tool.function.name));
}

/** A question's negative: the tools it loses (and by which rule), or why it has none. */
export type NegativeVerdict =
  | { ok: true; category: 'no_narrowing' | 'getters_only' | 'endpoints_tried'; removed: string[] }
  | { ok: false; category: string; message: string };

/**
 * The negative of `item`: its gold's tools removed, and
 * - SLOT / SEL: the coverage rule's (negative-coverage.ts): every narrowing tool, or, where
 *   only SEL getters are left, those that read the answer (or a column of it) off a starting
 *   table;
 * - REST: every endpoint that returns the answer when called with the question's arguments.
 * None when the answer is empty (any call that finds nothing matches it, as the judge reads
 * an empty gold) or when no tool would be left.
 */
export async function negativeOf(
  item: EvalItem,
  episode: Pick<Episode, 'call' | 'answer'>,
  db: DatabaseInfo | undefined,
): Promise<NegativeVerdict> {
  if (isEmptyAnswer(item.gold))
    return {
      ok: false,
      category: 'negative:empty_answer',
      message: 'the answer is empty: any call that finds nothing gives it',
    };
  const verdict = await removalOf(item, episode, db);
  if (!verdict.ok) return verdict;
  if (withoutTools(item.tools, new Set(verdict.removed)).length === 0)
    return { ok: false, category: 'negative:nothing_left', message: 'every tool answers the question or could' };
  return verdict;
}

async function removalOf(
  item: EvalItem,
  episode: Pick<Episode, 'call' | 'answer'>,
  db: DatabaseInfo | undefined,
): Promise<NegativeVerdict> {
  const gold = item.goldCalls.map((call) => call.name);
  if (item.formulation === 'rest') {
    const answering = await answeringTools(endpointCalls(item), [item.gold], episode);
    return { ok: true, category: 'endpoints_tried', removed: [...new Set([...gold, ...answering])].sort() };
  }
  if (!db) throw new Error(`database ${item.db} is not open`);
  const rule = sequenceRule(
    item,
    item.initialization.map((init) => keysForInitialization(db, [init]).length),
  );
  if (!rule.ok || rule.category === 'no_narrowing') return rule;
  const answering = await answeringTools(getterCalls(item, rule.getters), columnsOf(item.gold), episode);
  return { ok: true, category: rule.category, removed: [...rule.removed, ...answering].sort() };
}

/** No rows in any acceptable answer: the judge then takes any empty answer, of any width (eval/answer.ts). */
function isEmptyAnswer(gold: GoldResult): boolean {
  return gold.rows.length === 0 && !gold.acceptable?.some((rows) => rows.length > 0);
}

/**
 * The endpoint calls a dataset's negatives made, and their results: a read-only API answers
 * the same request alike, and the negatives of a database try many of the same (each of its
 * endpoints that needs no argument, for every one of them). Not SEL's getters: their
 * `$starting_table_var$` is each sample's own starting table.
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

/** Calls of the tools that might answer, per tool: those made with the arguments the question gives (a window found by knowing the data is not an answer). */
type Candidates = Map<string, ToolCall[]>;

/**
 * Each endpoint other than the gold's, called with the gold call's arguments (those it
 * takes; one that needs any other is not tried).
 */
function endpointCalls(item: EvalItem): Candidates {
  const gold = new Set(item.goldCalls.map((call) => call.name));
  const given = Object.assign({}, ...item.goldCalls.map((call) => call.arguments)) as Record<string, unknown>;
  const candidates: Candidates = new Map();
  for (const tool of item.tools) {
    if (gold.has(tool.function.name)) continue;
    const parameters = tool.function.parameters as { properties?: Record<string, unknown>; required?: string[] };
    if ((parameters.required ?? []).some((name) => !(name in given))) continue;
    const args = Object.fromEntries(
      Object.keys(parameters.properties ?? {}).flatMap((n) => (n in given ? [[n, given[n]]] : [])),
    );
    candidates.set(tool.function.name, [{ name: tool.function.name, arguments: args, label: '' }]);
  }
  return candidates;
}

/**
 * Each getter on each starting table, all of its column and its distinct values, each whole
 * and in every window (limit, offset) the gold's calls name.
 */
function getterCalls(item: EvalItem, getters: readonly string[]): Candidates {
  const named = item.goldCalls.flatMap(({ arguments: { limit, offset } }) =>
    typeof limit === 'number' && limit > 0
      ? [{ limit, ...(typeof offset === 'number' && offset > 0 ? { offset } : {}) }]
      : [],
  );
  const windows = [...new Map([{}, ...named].map((window) => [JSON.stringify(window), window])).values()];
  const starts = item.initialization.map((init) => `$${init.label}$`);
  return new Map(
    getters.map((name) => [
      name,
      starts.flatMap((source) =>
        [false, true].flatMap((distinct) =>
          windows.map((window) => ({
            name,
            arguments: { data_source: source, distinct, ...window },
            label: 'CANDIDATE',
          })),
        ),
      ),
    ]),
  );
}

/**
 * The gold's columns, each as an unordered answer of its own: a getter gives one column, and
 * one whose values are a column's (in any order) could be part of the answer, so it goes.
 */
function columnsOf(gold: GoldResult): GoldResult[] {
  return gold.columns.map((column, i) => ({
    ...gold,
    columns: [column],
    rows: gold.rows.map((row) => [row[i]]),
    acceptable: gold.acceptable?.map((rows) => rows.map((row) => [row[i]])),
    ordered: false,
    ties: undefined,
  }));
}

/** The candidates whose call (any of them) gives one of `golds`, judged as evaluation judges answers. */
async function answeringTools(
  candidates: Candidates,
  golds: readonly GoldResult[],
  episode: Pick<Episode, 'call' | 'answer'>,
): Promise<string[]> {
  const answering: string[] = [];
  for (const [name, calls] of candidates)
    for (const call of calls) {
      const result = await episode.call(call);
      if (!result.ok || golds.every((gold) => tooLong(result.output, gold))) continue;
      if (await anyAnswers(call, result, golds, episode)) {
        answering.push(name);
        break;
      }
    }
  return answering;
}

async function anyAnswers(
  call: ToolCall,
  result: StepResult,
  golds: readonly GoldResult[],
  episode: Pick<Episode, 'answer'>,
): Promise<boolean> {
  for (const gold of golds) if ((await judgeAnswer([{ call, result }], gold, episode)).ok) return true;
  return false;
}

/**
 * A list shown with more values than any acceptable answer has rows cannot be it (a call's
 * output is a preview of its first rows, and judging one whole would compute it whole).
 */
function tooLong(output: ToolOutput | RestResponse, gold: GoldResult): boolean {
  if (!('kind' in output) || output.kind !== 'list') return false;
  return (gold.acceptable ?? [gold.rows]).every((rows) => output.values.length > rows.length);
}
