import type { SlotSequence, ToolCall } from '../core/model.js';

/**
 * Mutations of an accepted SLOT sequence, each the kind of mistake a model makes: a filter
 * dropped, a comparison flipped, a literal changed, a sort dropped, an aggregate swapped.
 * A verification worth the name rejects the mutated sequence (the mutation check of issue
 * 11). Pure: a mutation returns a new sequence, or null where it does not apply.
 */

export type MutationKind = 'drop_filter' | 'flip_comparison' | 'change_literal' | 'drop_sort' | 'swap_aggregate';

export const MUTATION_KINDS: readonly MutationKind[] = [
  'drop_filter',
  'flip_comparison',
  'change_literal',
  'drop_sort',
  'swap_aggregate',
];

const FLIPPED: Record<string, string> = {
  equal_to: 'not_equal_to',
  not_equal_to: 'equal_to',
  greater_than: 'less_than_equal_to',
  less_than_equal_to: 'greater_than',
  less_than: 'greater_than_equal_to',
  greater_than_equal_to: 'less_than',
  like: 'not_like',
  not_like: 'like',
  contains: 'not_contains',
  not_contains: 'contains',
  in: 'not_in',
  not_in: 'in',
  is_null: 'is_not_null',
  is_not_null: 'is_null',
};

const SWAPPED: Record<string, string> = { count: 'max', sum: 'mean', mean: 'max', max: 'min', min: 'max', std: 'mean' };

/** A mutant: the sequence, and the call that was dropped or changed, as it was. */
export interface Mutant {
  sequence: SlotSequence;
  call: ToolCall;
}

export function mutate(sequence: SlotSequence, kind: MutationKind): Mutant | null {
  switch (kind) {
    case 'drop_filter':
      return dropCall(sequence, 'filter_data');
    case 'drop_sort':
      return dropCall(sequence, 'sort_data');
    case 'flip_comparison':
      return changeArgument(sequence, 'filter_data', 'condition', (c) =>
        typeof c === 'string' && FLIPPED[c] ? FLIPPED[c] : undefined,
      );
    case 'change_literal':
      return changeArgument(sequence, 'filter_data', 'value', otherLiteral);
    case 'swap_aggregate':
      return changeArgument(sequence, 'aggregate_data', 'aggregation_type', (t) =>
        typeof t === 'string' && SWAPPED[t] ? SWAPPED[t] : undefined,
      );
  }
}

/** Another value of the same type: a number doubled (0: 1), a text with a character changed. */
function otherLiteral(value: unknown): unknown {
  if (typeof value === 'number') return value === 0 ? 1 : value * 2;
  if (typeof value === 'string' && value.length > 0 && !value.startsWith('$'))
    return value.slice(0, -1) + (value.endsWith('a') ? 'b' : 'a');
  return undefined;
}

/** The first call of `tool` whose argument can be changed, changed. */
function changeArgument(
  sequence: SlotSequence,
  tool: string,
  argument: string,
  change: (value: unknown) => unknown,
): Mutant | null {
  const at = sequence.calls.findIndex((c) => c.name === tool && change(c.arguments[argument]) !== undefined);
  if (at < 0) return null;
  const call = sequence.calls[at];
  const changed: ToolCall = { ...call, arguments: { ...call.arguments, [argument]: change(call.arguments[argument]) } };
  return { sequence: { ...sequence, calls: sequence.calls.map((c, i) => (i === at ? changed : c)) }, call };
}

/** The first call of `tool` removed; whatever read its output reads its input instead. */
function dropCall(sequence: SlotSequence, tool: string): Mutant | null {
  const dropped = sequence.calls.find((c) => c.name === tool && typeof c.arguments.data_source === 'string');
  if (!dropped?.label || sequence.answerLabels.includes(dropped.label)) return null;
  const from = JSON.stringify(`$${dropped.label}$`);
  const to = JSON.stringify(dropped.arguments.data_source);
  const calls = sequence.calls
    .filter((c) => c !== dropped)
    .map((c) => JSON.parse(JSON.stringify(c).split(from).join(to)) as ToolCall);
  return { sequence: { ...sequence, calls }, call: dropped };
}
