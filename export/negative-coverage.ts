import type { GoldResult, SelBinding } from '../core/model.js';
import type { EvalItem } from '../eval/dataset.js';

/**
 * Which tools a SLOT or SEL negative must lose so that none of those left can answer its
 * question (docs/FORMATS.md, "Negatives"). The gold's tools go, but most capabilities have
 * substitutes (a max is a descending sort with limit 1 then a retrieve; an ordering is also
 * what group_data_by or combine_data give; a filtered count is a count of an if_then_else
 * transform), so chasing each capability's substitutes proves little. One capability every
 * answer needs has few providers: narrowing the starting table to the answer's columns (the
 * judge compares column counts). Only the tools in NARROWING output fewer columns than they
 * read; filter_data, sort_data, transform_data, union_data and join_data keep every column of
 * their input (join_data's inner and left add the other's), and calculate reads a literal or a
 * scalar, which only a narrowing tool makes; combine_data narrows when its key lists pick
 * some of its inputs' columns. So without NARROWING every output is at least as wide as a
 * starting table, and an answer narrower than every starting table is out of reach.
 *
 * SEL's universe is the gold's tools and one getter per starting column: once the gold's
 * tools are gone, getters are left with nothing that filters, sorts or computes, so each can
 * only read a starting table's column as it is. Those are tried (negatives.ts) rather than
 * all removed, so that a SEL negative still offers something.
 */

/** The SLOT tools whose output can be narrower than their input. */
export const NARROWING: ReadonlySet<string> = new Set([
  'retrieve_data',
  'select_unique_values',
  'group_data_by',
  'aggregate_data',
  'combine_data',
]);

/** What a sequence negative must lose, or why it has none (`ok: false`, dropped). */
export type SequenceRule =
  | { ok: true; category: 'no_narrowing'; removed: string[] }
  | { ok: true; category: 'getters_only'; removed: string[]; getters: string[] }
  | { ok: false; category: 'negative:as_wide_as_start'; message: string };

/** The SLOT tool a tool name stands for: itself, or a SEL name's binding. */
function slotToolOf(name: string, bindings: Record<string, SelBinding> | undefined): string {
  return bindings?.[name]?.slotTool ?? name;
}

/** A SEL getter: retrieve_data with its key bound (it reads one column of its input). */
function isGetter(name: string, bindings: Record<string, SelBinding> | undefined): boolean {
  const binding = bindings?.[name];
  return binding?.slotTool === 'retrieve_data' && 'key_name' in binding.boundArguments;
}

/**
 * The rule for a SLOT or SEL item: its gold's tools go; when what is left is getters only,
 * they are to be tried (`getters_only`); otherwise every narrowing tool goes too
 * (`no_narrowing`), which proves nothing answers only when the answer is narrower than every
 * starting table (`startWidths`, their column counts).
 */
export function sequenceRule(
  item: Pick<EvalItem, 'goldCalls' | 'tools' | 'bindings' | 'gold'>,
  startWidths: readonly number[],
): SequenceRule {
  const gold = new Set(item.goldCalls.map((call) => call.name));
  const left = item.tools.map((tool) => tool.function.name).filter((name) => !gold.has(name));
  if (left.every((name) => isGetter(name, item.bindings)))
    return { ok: true, category: 'getters_only', removed: [...gold].sort(), getters: left };
  const width = answerWidth(item.gold);
  const narrowest = Math.min(...startWidths);
  if (width >= narrowest)
    return {
      ok: false,
      category: 'negative:as_wide_as_start',
      message: `the answer has ${width} columns and a starting table ${narrowest}: filters and sorts alone could give it`,
    };
  const narrowing = left.filter((name) => NARROWING.has(slotToolOf(name, item.bindings)));
  return { ok: true, category: 'no_narrowing', removed: [...gold, ...narrowing].sort() };
}

/** The answer's column count (its rows', for a gold whose column names were not kept). */
function answerWidth(gold: GoldResult): number {
  return Math.max(gold.columns.length, ...gold.rows.map((row) => row.length));
}
