import type { ToolCall, ToolSpec } from '../../core/model.js';
import { relabel, sameValue } from './alignment.js';

/**
 * Error categories after BFCL's (the Berkeley Function-Calling Leaderboard's AST checker),
 * the first that applies in this order, or null for a reply without error:
 * - `instruction_alignment_failure`: the reply could not be read as tool calls at all;
 * - `wrong_func_count`: another number of calls than the gold's;
 * - `wrong_func_format`: a call that is not `{name: string, arguments: object}`;
 * - `hallucinated_func_name`: a tool the item's universe does not have;
 * - `wrong_func_name`: a real tool, but not the gold's at that position;
 * - `missing_required_parameter`: a parameter the tool's spec requires is absent;
 * - `unexpected_param`: an argument the tool's spec does not declare;
 * - `value_error`: an argument whose value differs from the gold's (a reference to an
 *   earlier call's output counts as the gold label at that call's position).
 * Calls are compared position by position (the counts agree by then).
 */

export const BFCL_CATEGORIES = [
  'instruction_alignment_failure',
  'wrong_func_count',
  'wrong_func_format',
  'hallucinated_func_name',
  'wrong_func_name',
  'missing_required_parameter',
  'unexpected_param',
  'value_error',
] as const;

export type BfclCategory = (typeof BFCL_CATEGORIES)[number];

/** `parsed`: the calls read off the reply (null: unreadable), as the parser found them. */
export function bfclCategory(
  parsed: readonly unknown[] | null,
  gold: readonly ToolCall[],
  tools: readonly ToolSpec[],
): BfclCategory | null {
  if (parsed === null) return 'instruction_alignment_failure';
  if (parsed.length !== gold.length) return 'wrong_func_count';
  if (!parsed.every(isCall)) return 'wrong_func_format';
  const calls = parsed;
  const specs = new Map(tools.map((t) => [t.function.name, t.function.parameters]));
  if (calls.some((c) => !specs.has(c.name))) return 'hallucinated_func_name';
  if (calls.some((c, i) => c.name !== gold[i].name)) return 'wrong_func_name';
  const declared = (name: string) => specs.get(name) as { properties?: Record<string, unknown>; required?: string[] };
  if (calls.some((c) => (declared(c.name).required ?? []).some((p) => !(p in c.arguments))))
    return 'missing_required_parameter';
  if (calls.some((c) => Object.keys(c.arguments).some((p) => !(p in (declared(c.name).properties ?? {})))))
    return 'unexpected_param';
  const labels = new Map(calls.flatMap((c, i) => (typeof c.label === 'string' ? [[c.label, gold[i].label]] : [])));
  const wrongValue = calls.some((c, i) =>
    Object.entries(gold[i].arguments).some(([name, value]) => !sameValue(relabel(c.arguments[name], labels), value)),
  );
  return wrongValue ? 'value_error' : null;
}

export interface ParsedCall {
  name: string;
  arguments: Record<string, unknown>;
  label?: unknown;
}

/** `{name: string, arguments: object}`: a call as the format check reads it (any label). */
export function isCall(value: unknown): value is ParsedCall {
  if (value === null || typeof value !== 'object') return false;
  const call = value as Record<string, unknown>;
  const args = call.arguments;
  return typeof call.name === 'string' && args !== null && typeof args === 'object' && !Array.isArray(args);
}
