import { hashJson } from '../core/hash.js';
import type { DatabaseInfo, GoldResult, SqlValue, ToolCall, ToolOutput, ToolSpec } from '../core/model.js';
import { mulberry32 } from '../core/random.js';
import type { EvalItem } from '../eval/dataset.js';
import { OBSERVED_ROWS, type Episode, type StepResult } from '../eval/environment.js';
import { keysForInitialization } from '../runtime/slot/specs.js';
import { compareWithAcceptable } from '../verifiers/differential.js';
import { answerTable, type RestResponse } from '../verifiers/rest.js';
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
 *   only SEL getters are left, those that read a column of the answer off a starting table;
 * - REST: every endpoint whose response, called with the question's arguments, holds a column
 *   of the answer.
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
    const answering = await answeringTools(endpointCalls(item), columnsOf(item.gold), episode);
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
  let made = 0; // an episode's labels are unique: each candidate call is its own
  return new Map(
    getters.map((name) => [
      name,
      starts.flatMap((source) =>
        [false, true].flatMap((distinct) =>
          windows.map((window) => ({
            name,
            arguments: { data_source: source, distinct, ...window },
            label: `CANDIDATE_${++made}`,
          })),
        ),
      ),
    ]),
  );
}

/**
 * The gold's columns, each as an unordered answer of its own: a tool whose output holds one of
 * them (in any order) gives part of the answer, and another call might give the rest.
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

/**
 * The candidates one of whose calls gives a column of the answer (any column of its output
 * that is one of `columns`, compared as evaluation compares answers), so the answer or a part
 * of it: a response with more fields than the answer still holds it.
 */
async function answeringTools(
  candidates: Candidates,
  columns: readonly GoldResult[],
  episode: Pick<Episode, 'call' | 'answer'>,
): Promise<string[]> {
  const answering: string[] = [];
  for (const [name, calls] of candidates)
    for (const call of calls) {
      const result = await episode.call(call);
      if (!result.ok) continue;
      const output = await outputFor(call, result.output, columns, episode);
      if (outputColumns(output).some((values) => columns.some((gold) => holds(values, gold)))) {
        answering.push(name);
        break;
      }
    }
  return answering;
}

/**
 * A call's output, as much of it as comparing with `columns` reads: a response read as the
 * judge reads one (none if it is not rows); a sequence call's preview (its first rows) when
 * it is whole or when no column is longer than it, else its output computed whole.
 */
async function outputFor(
  call: ToolCall,
  output: ToolOutput | RestResponse,
  columns: readonly GoldResult[],
  episode: Pick<Episode, 'answer'>,
): Promise<ToolOutput | null> {
  if ('status' in output) return output.status === 200 ? answerTable(output.body) : null;
  const shown = output.kind === 'scalar' ? 1 : output.kind === 'list' ? output.values.length : output.rows.length;
  const longest = Math.max(...columns.flatMap((gold) => (gold.acceptable ?? [gold.rows]).map((rows) => rows.length)));
  if (shown <= OBSERVED_ROWS || longest < shown) return output;
  if (!episode.answer) throw new Error('a tool-sequence episode computes its answer');
  return (await episode.answer([call], [call.label]))[0];
}

function outputColumns(output: ToolOutput | null): SqlValue[][] {
  if (!output) return [];
  if (output.kind === 'scalar') return [[output.value]];
  if (output.kind === 'list') return [output.values];
  return output.columns.map((_, c) => output.rows.map((row) => row[c] ?? null));
}

/**
 * The values are the column, or begin with it: a response listing the first N of an ordering
 * (a top 3) answers a question for its first (the top 1), read off its first rows.
 */
function holds(values: SqlValue[], column: GoldResult): boolean {
  const prefix = values.slice(0, column.rows.length);
  return [values, prefix].some((part) => compareWithAcceptable([{ kind: 'list', values: part }], column).ok);
}
