import { hashJson } from '../core/hash.js';
import type { DatabaseInfo, GoldResult, SqlValue, ToolOutput, ToolSpec } from '../core/model.js';
import { mulberry32 } from '../core/random.js';
import type { EvalItem } from '../eval/dataset.js';
import { OBSERVED_ROWS, type Episode, type StepResult } from '../eval/environment.js';
import { keysForInitialization } from '../runtime/slot/specs.js';
import { compareWithAcceptable, listMayMatch } from '../verifiers/differential.js';
import { answerTable } from '../verifiers/rest.js';
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
  episode: Pick<Episode, 'call' | 'rows'>,
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
  episode: Pick<Episode, 'call' | 'rows'>,
  db: DatabaseInfo | undefined,
): Promise<NegativeVerdict> {
  const gold = item.goldCalls.map((call) => call.name);
  if (item.formulation === 'rest') {
    const answering = await answeringTools(endpointReadings(item, episode), columnsOf(item.gold));
    return { ok: true, category: 'endpoints_tried', removed: [...new Set([...gold, ...answering])].sort() };
  }
  if (!db) throw new Error(`database ${item.db} is not open`);
  const rule = sequenceRule(
    item,
    item.initialization.map((init) => keysForInitialization(db, [init]).length),
  );
  if (!rule.ok || rule.category === 'no_narrowing') return rule;
  const answering = await answeringTools(getterReadings(item, rule.getters, episode), columnsOf(item.gold));
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

/**
 * Per tool that might answer, what it gives when called with the arguments the question gives
 * (a window found by knowing the data is not an answer): value lists, one per column.
 */
type Readings = Map<string, () => Promise<SqlValue[][]>>;

/** The tools one of whose value lists is a column of the answer, or begins with one (`holds`). */
async function answeringTools(readings: Readings, columns: readonly GoldResult[]): Promise<string[]> {
  const answering: string[] = [];
  for (const [name, read] of readings)
    if ((await read()).some((values) => columns.some((gold) => holds(values, gold)))) answering.push(name);
  return answering;
}

/**
 * Each endpoint other than the gold's, called with the gold call's arguments (those it
 * takes; one that needs any other is not tried): its response's fields, read as the judge
 * reads a response.
 */
function endpointReadings(item: EvalItem, episode: Pick<Episode, 'call'>): Readings {
  const gold = new Set(item.goldCalls.map((call) => call.name));
  const given = Object.assign({}, ...item.goldCalls.map((call) => call.arguments)) as Record<string, unknown>;
  const readings: Readings = new Map();
  for (const tool of item.tools) {
    const name = tool.function.name;
    const parameters = tool.function.parameters as { properties?: Record<string, unknown>; required?: string[] };
    if (gold.has(name) || (parameters.required ?? []).some((n) => !(n in given))) continue;
    const args = Object.fromEntries(
      Object.keys(parameters.properties ?? {}).flatMap((n) => (n in given ? [[n, given[n]]] : [])),
    );
    readings.set(name, async () => {
      const result = await episode.call({ name, arguments: args, label: '' });
      const output = result.ok ? result.output : undefined;
      const table = output && 'status' in output && output.status === 200 ? answerTable(output.body) : null;
      return table ? table.columns.map((_, c) => table.rows.map((row) => row[c] ?? null)) : [];
    });
  }
  return readings;
}

/**
 * Each getter on each starting table: its column and its distinct values, and every window
 * (limit, offset) of them the gold's calls name. A getter reads its key's column of its input
 * as it is, so every getter's column of a starting table comes from one read of that table's
 * first rows: one statement per starting table, the same in every question over it. Those
 * rows are as many as a comparison reads and one more (a sign of more), and enough that most
 * columns show there the first distinct values a preview of them would (a column's distinct
 * values are its first occurrences, in row order); only a column that repeats few values
 * over a longer table needs a read of its own for them.
 */
function getterReadings(item: EvalItem, getters: readonly string[], episode: Pick<Episode, 'call' | 'rows'>): Readings {
  const windows = item.goldCalls.flatMap(({ arguments: { limit, offset } }) =>
    typeof limit === 'number' && limit > 0 ? [{ limit, offset: typeof offset === 'number' ? offset : 0 }] : [],
  );
  const rows = [item.gold.rows, ...(item.gold.acceptable ?? [])].map((answer) => answer.length);
  const need = Math.max(...rows, ...windows.map((w) => w.offset + w.limit));
  const { rows: firstRows } = episode;
  if (!firstRows) throw new Error('a tool-sequence episode reads its outputs');
  // The first `need` values and one more, never fewer than a preview shows.
  const shown = Math.max(OBSERVED_ROWS, need) + 1;
  const readRows = Math.max(shown, DISTINCT_ROWS_READ);
  const starts = new Map(item.initialization.map((init) => [`$${init.label}$`, init.label]));
  const read = new Map<string, Promise<StepResult>>();
  /** A getter's column of the starting table's first rows, and whether that is the whole column. */
  const column = async (name: string, source: string): Promise<{ values: SqlValue[]; whole: boolean }> => {
    let rowsRead = read.get(source);
    if (!rowsRead) read.set(source, (rowsRead = firstRows(starts.get(source)!, readRows)));
    const result = await rowsRead;
    if (!result.ok || 'status' in result.output || result.output.kind !== 'table') return { values: [], whole: true };
    const { columns, rows: values } = result.output;
    // A getter of a key its input lacks is refused, as its call would be.
    const at = columns.indexOf(getterKeyOf(name, item.bindings) ?? '');
    return at < 0
      ? { values: [], whole: true }
      : { values: values.map((row) => row[at]), whole: values.length < readRows };
  };
  /** The first distinct values a preview of the getter's distinct call shows. */
  const distinctValues = async (name: string, source: string, read: { values: SqlValue[]; whole: boolean }) => {
    const first = firstOccurrences(read.values);
    if (read.whole || first.length > OBSERVED_ROWS) return first.slice(0, OBSERVED_ROWS + 1);
    // Unique in the episode (its labels must be), and the same in every episode of the same
    // starting table: the same statement, which the memoized executor runs once.
    const label = `CANDIDATE_DISTINCT_${source.slice(1, -1)}_${name}`;
    const result = await episode.call({ name, arguments: { data_source: source, distinct: true }, label });
    return !result.ok || 'status' in result.output ? [] : valuesOf(result.output); // a preview: its first rows
  };
  return new Map(
    getters.map((name) => [
      name,
      async () => {
        const lists: SqlValue[][] = [];
        for (const source of starts.keys()) {
          const read = await column(name, source);
          const all = read.values.slice(0, shown);
          // A whole column's distinct values are its first occurrences; the first `need` values
          // of a longer one, when all different, are its first distinct ones.
          const whole = all.length <= need;
          const distinct = whole
            ? firstOccurrences(all)
            : firstOccurrences(all.slice(0, need)).length === need
              ? all
              : await distinctValues(name, source, read);
          for (const values of [all, distinct])
            lists.push(values, ...windows.map((w) => values.slice(w.offset, w.offset + w.limit)));
        }
        return lists;
      },
    ]),
  );
}

/**
 * Rows of a starting table its getters read at least: most columns hold as many distinct
 * values as a preview shows within them (BIRD dev: 1,100 distinct reads with 21 rows, 615 with
 * 100; 388 with 1,000, which carry ten times the cells).
 */
const DISTINCT_ROWS_READ = 100;

/** The key a getter reads (its binding's). */
function getterKeyOf(name: string, bindings: EvalItem['bindings']): string | undefined {
  const key = bindings?.[name]?.boundArguments.key_name;
  return typeof key === 'string' ? key : undefined;
}

function valuesOf(output: ToolOutput): SqlValue[] {
  return output.kind === 'scalar'
    ? [output.value]
    : output.kind === 'list'
      ? output.values
      : output.rows.map((r) => r[0]);
}

function firstOccurrences(values: readonly SqlValue[]): SqlValue[] {
  return [...new Map(values.map((value) => [JSON.stringify(value), value])).values()];
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
 * The values are the column, or begin with it: a response listing the first N of an ordering
 * (a top 3) answers a question for its first (the top 1), read off its first rows.
 */
function holds(values: SqlValue[], column: GoldResult): boolean {
  const parts = values.length > column.rows.length ? [values, values.slice(0, column.rows.length)] : [values];
  return parts.some(
    (part) => listMayMatch(part, column) && compareWithAcceptable([{ kind: 'list', values: part }], column).ok,
  );
}
