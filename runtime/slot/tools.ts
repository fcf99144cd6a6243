import type { CallScope } from './call-scope.js';
import type { SlotTool } from './catalog.js';
import type { Shape } from './relation.js';
import { combine, union } from './tool-combine.js';
import { joinData } from './tool-join.js';
import { calculate, transform } from './tool-compute.js';
import { aggregate, group } from './tool-groups.js';
import { retrieve, unique } from './tool-projections.js';
import { filter, sort } from './tool-rows.js';

/** Compiles one call of a tool into its shape; an invalid call throws a ToolError. */
export type CompileTool = (call: CallScope) => Shape;

/**
 * The SLOT tools the runtime implements, by name: how each compiles one call. Keyed by
 * the catalog's `SlotTool`, so a tool the catalog declares cannot lack an entry (nor can
 * the table hold a tool the catalog does not know) without a type error.
 * initialize_active_data is not here: the system runs it, models do not call it.
 */
export const TOOL_COMPILERS: { readonly [T in SlotTool]: CompileTool } = {
  filter_data: filter,
  sort_data: sort,
  retrieve_data: retrieve,
  aggregate_data: aggregate,
  group_data_by: group,
  select_unique_values: unique,
  transform_data: transform,
  union_data: union,
  calculate,
  combine_data: combine,
  join_data: joinData,
};

const BY_NAME: ReadonlyMap<string, CompileTool> = new Map(Object.entries(TOOL_COMPILERS));

/** The entry of the tool called `name`; undefined for a name the runtime does not implement. */
export function toolCompiler(name: string): CompileTool | undefined {
  return BY_NAME.get(name);
}
