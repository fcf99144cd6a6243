import type { ToolCall, ToolSpec } from '../core/model.js';
import { hashJson } from '../core/hash.js';
import { mulberry32 } from '../core/random.js';

/**
 * The tools as one attempt shows them to the model, after the paper's experiments:
 * `--obfuscate` (B.1: tool and argument names replaced by FUNC_N / ARG_N, and the
 * descriptions rewritten in those names, so that nothing tells the real ones) and
 * `--shortlist <percent>` (B.2: the universe cut to that share, the gold tools always kept,
 * the others drawn with a seed fixed per item). The model is held to what it was shown: a
 * call of a tool or with an argument the view does not offer (a real name under
 * --obfuscate, a tool cut from the shortlist) is refused before it runs, and calls are
 * scored in the names the model saw. What it may call is mapped back to the dataset's names
 * to run.
 */

export interface ToolView {
  tools: readonly ToolSpec[];
  /** A call in the dataset's names, as the model sees it. */
  toModel(call: ToolCall): ToolCall;
  /** A call as the model wrote it, in the dataset's names (unknown names are left as written). */
  fromModel<C extends { name: string; arguments: Record<string, unknown> }>(call: C): C;
  /**
   * Why a call in the model's names is not one the view offers (`tool:unknown_tool`,
   * `tool:unknown_argument`, as the runtime words its own refusals), or null. The whole
   * universe refuses nothing here: the runtime does, in its own words.
   */
  refusal(call: { name: string; arguments: Record<string, unknown> }): { kind: string; error: string } | null;
}

export interface ViewOptions {
  obfuscate: boolean;
  /** Percent of the universe kept (100: all). */
  shortlist: number;
}

export function toolView(
  tools: readonly ToolSpec[],
  gold: readonly ToolCall[],
  key: string,
  options: ViewOptions,
): ToolView {
  // The universe itself when nothing is cut: a database's items share one list (and its rendering).
  const shown =
    options.shortlist < 100 ? shortlist(tools, gold, key, Math.round((tools.length * options.shortlist) / 100)) : tools;
  if (options.obfuscate) return shown === tools ? obfuscatedUniverse(tools) : obfuscated(shown);
  return {
    tools: shown,
    toModel: (c) => c,
    fromModel: (c) => c,
    refusal: shown === tools ? () => null : offered(shown),
  };
}

/** The refusal of a view that shows `tools`: a tool it does not list, an argument the tool does not declare. */
function offered(tools: readonly ToolSpec[]): ToolView['refusal'] {
  const declared = new Map(tools.map((t) => [t.function.name, propertiesOf(t)]));
  return (call) => {
    const args = declared.get(call.name);
    if (!args)
      return { kind: 'tool:unknown_tool', error: `unknown tool "${call.name}": it is not among the tools offered` };
    const unknown = Object.keys(call.arguments).find((a) => !args.includes(a));
    return unknown === undefined
      ? null
      : {
          kind: 'tool:unknown_argument',
          error: `unknown argument "${unknown}" of ${call.name}; arguments are ${args.join(', ')}`,
        };
  };
}

function propertiesOf(tool: ToolSpec): string[] {
  return Object.keys((tool.function.parameters as { properties?: Record<string, unknown> }).properties ?? {});
}

/**
 * About `count` tools of the universe, in its order: the gold's tools always, the others drawn
 * with a seed fixed by `key` (the same item gets the same list on every run).
 */
export function shortlist(
  tools: readonly ToolSpec[],
  gold: readonly ToolCall[],
  key: string,
  count: number,
): ToolSpec[] {
  const needed = new Set(gold.map((c) => c.name));
  const keep = Math.max(needed.size, count);
  const others = tools.filter((t) => !needed.has(t.function.name));
  const random = mulberry32(parseInt(hashJson(key).slice(0, 8), 16));
  for (let i = others.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [others[i], others[j]] = [others[j], others[i]];
  }
  const chosen = new Set([...needed, ...others.slice(0, keep - needed.size).map((t) => t.function.name)]);
  return tools.filter((t) => chosen.has(t.function.name));
}

/** A database's items share one universe: its obfuscated view is built once. */
const obfuscatedViews = new WeakMap<readonly ToolSpec[], ToolView>();
function obfuscatedUniverse(tools: readonly ToolSpec[]): ToolView {
  let view = obfuscatedViews.get(tools);
  if (!view) obfuscatedViews.set(tools, (view = obfuscated(tools)));
  return view;
}

interface Renaming {
  name: string;
  args: Map<string, string>;
}

function obfuscated(tools: readonly ToolSpec[]): ToolView {
  // One number per argument name across the universe: a description that mentions another
  // tool's argument hides it under the same name that tool shows.
  const argNames = new Map([...new Set(tools.flatMap(propertiesOf))].map((a, k) => [a, `ARG_${k + 1}`]));
  const toolNames = new Map(tools.map((tool, i) => [tool.function.name, `FUNC_${i + 1}`]));
  const forward = new Map<string, Renaming>();
  const backward = new Map<string, Renaming>();
  for (const tool of tools) {
    const args = new Map(propertiesOf(tool).map((a) => [a, argNames.get(a)!]));
    const name = toolNames.get(tool.function.name)!;
    forward.set(tool.function.name, { name, args });
    backward.set(name, { name: tool.function.name, args: new Map([...args].map(([a, b]) => [b, a])) });
  }
  const words = wordsOf([...toolNames.keys(), ...argNames.keys()]);
  const hide = (text: string) => text.replace(words, (word) => toolNames.get(word) ?? argNames.get(word) ?? word);
  // A nested object (an operand {key_name}, an order item {key_name, ascending}) whose keys are
  // argument names shows them hidden too, as the descriptions name them: so does a call's.
  const hideName = (name: string) => argNames.get(name) ?? name;
  const argOf = new Map([...argNames].map(([a, b]) => [b, a]));
  const specs = tools.map((tool): ToolSpec => {
    const { name } = forward.get(tool.function.name)!;
    return {
      ...tool,
      function: {
        ...tool.function,
        name,
        ...(tool.function.description !== undefined ? { description: hide(tool.function.description) } : {}),
        parameters: hideSchema(tool.function.parameters, hide, hideName) as ToolSpec['function']['parameters'],
      },
    };
  });
  const rename = <C extends { name: string; arguments: Record<string, unknown> }>(
    table: Map<string, Renaming>,
    nested: ReadonlyMap<string, string>,
    call: C,
  ): C => {
    const to = table.get(call.name);
    if (!to) return call;
    const args = Object.fromEntries(
      Object.entries(call.arguments).map(([a, v]) => [to.args.get(a) ?? a, renameKeys(v, nested)]),
    );
    return { ...call, name: to.name, arguments: args };
  };
  return {
    tools: specs,
    toModel: (call) => rename(forward, argNames, call),
    fromModel: (call) => rename(backward, argOf, call),
    refusal: offered(specs),
  };
}

/** Any of `names` as a whole word (not inside a `$reference$`; the longest first, so `data` never splits `data_source`). */
function wordsOf(names: readonly string[]): RegExp {
  const escaped = [...new Set(names)]
    .sort((a, b) => b.length - a.length)
    .map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(escaped.length ? `(?<![\\w$])(?:${escaped.join('|')})(?![\\w])` : '(?!)', 'g');
}

/**
 * A schema with every `description` in it rewritten by `hide`, and every property name (in
 * `properties` and `required`, nested ones too) by `hideName`; enum values are data, kept.
 */
function hideSchema(schema: unknown, hide: (text: string) => string, hideName: (name: string) => string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => hideSchema(s, hide, hideName));
  if (schema === null || typeof schema !== 'object') return schema;
  const entry = ([key, value]: [string, unknown]): [string, unknown] => {
    if (key === 'description' && typeof value === 'string') return [key, hide(value)];
    if (key === 'enum') return [key, value];
    if (key === 'required' && Array.isArray(value))
      return [key, (value as unknown[]).map((v) => (typeof v === 'string' ? hideName(v) : v))];
    if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const properties = Object.entries(value as Record<string, unknown>);
      return [key, Object.fromEntries(properties.map(([p, s]) => [hideName(p), hideSchema(s, hide, hideName)]))];
    }
    return [key, hideSchema(value, hide, hideName)];
  };
  return Object.fromEntries(Object.entries(schema).map(entry));
}

/** `value` with the keys of the objects in it renamed by `names` (an argument's operands and items). */
function renameKeys(value: unknown, names: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, names));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [names.get(k) ?? k, renameKeys(v, names)]));
}
