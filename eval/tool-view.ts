import type { ToolCall, ToolSpec } from '../core/model.js';
import { hashJson } from '../core/hash.js';
import { mulberry32 } from '../core/random.js';

/**
 * The tools as one attempt shows them to the model, after the paper's experiments:
 * `--obfuscate` (B.1: tool and argument names replaced by FUNC_N / ARG_N, descriptions kept)
 * and `--shortlist <percent>` (B.2: the universe cut to that share, the gold tools always
 * kept, the others drawn with a seed fixed per item). Calls go through the view both ways:
 * what the model writes is mapped back to the dataset's names before it runs and is scored.
 */

export interface ToolView {
  tools: readonly ToolSpec[];
  /** A call in the dataset's names, as the model sees it. */
  toModel(call: ToolCall): ToolCall;
  /** A call as the model wrote it, in the dataset's names (unknown names are left as written). */
  fromModel<C extends { name: string; arguments: Record<string, unknown> }>(call: C): C;
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
  return options.obfuscate ? obfuscated(shown) : { tools: shown, toModel: (c) => c, fromModel: (c) => c };
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

interface Renaming {
  name: string;
  args: Map<string, string>;
}

function obfuscated(tools: readonly ToolSpec[]): ToolView {
  const forward = new Map<string, Renaming>();
  const backward = new Map<string, Renaming>();
  const specs = tools.map((tool, i) => {
    const parameters = tool.function.parameters as { properties?: Record<string, unknown>; required?: string[] };
    const argNames = Object.keys(parameters.properties ?? {});
    const args = new Map(argNames.map((a, j) => [a, `ARG_${j + 1}`]));
    const name = `FUNC_${i + 1}`;
    forward.set(tool.function.name, { name, args });
    backward.set(name, { name: tool.function.name, args: new Map([...args].map(([a, b]) => [b, a])) });
    return {
      ...tool,
      function: {
        ...tool.function,
        name,
        parameters: {
          ...parameters,
          properties: Object.fromEntries(
            argNames.map((a): [string, unknown] => [args.get(a) ?? a, parameters.properties?.[a]]),
          ),
          ...(parameters.required ? { required: parameters.required.map((a) => args.get(a) ?? a) } : {}),
        },
      },
    };
  });
  const rename = <C extends { name: string; arguments: Record<string, unknown> }>(
    table: Map<string, Renaming>,
    call: C,
  ): C => {
    const to = table.get(call.name);
    if (!to) return call;
    const args = Object.fromEntries(Object.entries(call.arguments).map(([a, v]) => [to.args.get(a) ?? a, v]));
    return { ...call, name: to.name, arguments: args };
  };
  return { tools: specs, toModel: (call) => rename(forward, call), fromModel: (call) => rename(backward, call) };
}
