import { z } from 'zod';
import type { ToolCall, ToolSpec } from '../core/model.js';
import { perObject } from '../core/per-object.js';
import { escapedBytesOf, listPieces, perText } from './shared-parts.js';
import type { Piece } from './writer.js';

/**
 * A sample in the xLAM / APIGen format (Salesforce's xlam-function-calling-60k, the APIGen
 * paper): `query`, `tools` and `answers`, the last two as JSON strings; each tool's parameters
 * as `{name: {type, description, default?}}` rather than JSON Schema. A call carries its
 * `label` beside name and arguments: nl2api's calls chain (`"$LABEL$"` names an earlier call's
 * output), which the format's independent calls do not.
 */

const ParameterSchema = z
  .object({ type: z.string(), description: z.string(), default: z.unknown().optional() })
  .strict();
const ToolSchema = z
  .object({ name: z.string().min(1), description: z.string(), parameters: z.record(z.string(), ParameterSchema) })
  .strict();
const AnswerSchema = z
  .object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()), label: z.string().optional() })
  .strict();

/** A JSON string holding a `schema` value; each distinct text checked once (a tool list is shared by many lines). */
const jsonOf = <T extends z.ZodType>(schema: T) => {
  const problem = perText((text): string | undefined => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return 'not JSON';
    }
    const parsed = schema.safeParse(value);
    return parsed.success ? undefined : parsed.error.message;
  });
  return z.string().superRefine((text, ctx) => {
    const message = problem(text);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  });
};

export const XlamExampleSchema = z
  .object({
    id: z.number().int().min(0),
    query: z.string().min(1),
    tools: jsonOf(z.array(ToolSchema)),
    answers: jsonOf(z.array(AnswerSchema)),
  })
  .strict();

export type XlamExample = z.infer<typeof XlamExampleSchema>;

export function xlamExample(
  id: number,
  query: string,
  calls: readonly ToolCall[],
  tools: readonly ToolSpec[],
): XlamExample {
  return {
    id,
    query,
    tools: toolsJson(tools),
    answers: JSON.stringify(
      calls.map((c) => ({ name: c.name, arguments: c.arguments, ...(c.label ? { label: c.label } : {}) })),
    ),
  };
}

interface JsonSchemaProperty {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  items?: { type?: string };
}

/** A line, its `tools` string spliced from the bytes of its tools (escaped and encoded once per tool). */
export function xlamExampleLine(example: XlamExample, tools: readonly ToolSpec[]): Piece[] {
  const { tools: _written, ...rest } = example;
  return listPieces(`${JSON.stringify(rest).slice(0, -1)},"tools":"[`, tools.map(escapedTool), ']"}');
}

const escapedTool = perObject((tool: ToolSpec) => escapedBytesOf(xlamToolJson(tool)));

/** A tool list's `tools` string, once per list (the samples of a database over the same tables share theirs). */
const toolsJson = perObject((tools: readonly ToolSpec[]) => `[${tools.map(xlamToolJson).join(',')}]`);

/** A tool's text in the `tools` string, once per spec. */
export const xlamToolJson = perObject((tool: ToolSpec) => JSON.stringify(xlamTool(tool)));

/** A tool spec in APIGen's shape: `type` as Python-ish names (`str`, `int`, `List[str]`, …), the enum kept in the description. */
function xlamTool(tool: ToolSpec) {
  const properties = (tool.function.parameters as { properties?: Record<string, JsonSchemaProperty> }).properties ?? {};
  return {
    name: tool.function.name,
    description: tool.function.description,
    parameters: Object.fromEntries(
      Object.entries(properties).map(([name, p]) => [
        name,
        {
          type: typeName(p),
          description: describe(p.description ?? name, p.enum),
          ...(p.default !== undefined ? { default: p.default } : {}),
        },
      ]),
    ),
  };
}

function typeName(p: JsonSchemaProperty): string {
  const names: Record<string, string> = {
    string: 'str',
    integer: 'int',
    number: 'float',
    boolean: 'bool',
    object: 'dict',
    array: 'list',
  };
  const types = (Array.isArray(p.type) ? p.type : [p.type ?? 'any']).filter((t) => t !== 'null');
  const name = (t: string) =>
    t === 'array' && p.items?.type ? `List[${names[p.items.type] ?? p.items.type}]` : (names[t] ?? t);
  const joined = types.map(name).join(', ');
  const nullable = Array.isArray(p.type) && p.type.includes('null');
  return types.length > 1
    ? `Union[${joined}]${nullable ? ', optional' : ''}`
    : `${joined}${nullable ? ', optional' : ''}`;
}

/** The description, then the allowed values as a sentence of their own. */
function describe(description: string, values: unknown[] | undefined): string {
  if (!values) return description;
  const sentence = /[.!?]$/.test(description) ? description : `${description}.`;
  return `${sentence} One of: ${values.map((v) => JSON.stringify(v)).join(', ')}.`;
}
