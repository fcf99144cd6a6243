import { readCallExpressions, readPythonLiteral } from './python-literal.js';

/**
 * The tool calls in a model's reply, read as tolerantly as models write them: native tool
 * calls; or, in the text, `<tool_call>…</tool_call>` blocks (Hermes, Qwen), fenced code
 * blocks, the whole text as JSON, JSON lines, the first JSON array or object amid prose, a
 * Python-literal list, or Python call syntax `[f(a=1, b="x")]`. Each call is normalized to
 * `{name, arguments, label?, id?}` where its shape allows (`{name, arguments}` with arguments
 * as an object or a JSON string, `{name, parameters}`, OpenAI's `{id, function: {…}}`); anything
 * else is kept as it is, for the format check to call it what it is. A reply with nothing
 * readable as calls is a failure with its reason, never a throw: the item's
 * `instruction_alignment_failure`.
 */

export interface ModelReply {
  content: string;
  /** Native tool calls, as the provider returned them. */
  toolCalls?: readonly { name: string; args: unknown; id?: string }[];
}

export type ParsedReply = { ok: true; calls: unknown[]; via: ReadVia } | { ok: false; reason: string };

export type ReadVia = 'native' | 'tool_call_tags' | 'code_fence' | 'json' | 'json_lines' | 'embedded_json' | 'python';

export function parseReply(reply: ModelReply): ParsedReply {
  if (reply.toolCalls && reply.toolCalls.length > 0) {
    return {
      ok: true,
      calls: reply.toolCalls.map((c) => normalizeCall({ name: c.name, arguments: c.args, id: c.id })),
      via: 'native',
    };
  }
  const text = reply.content.trim();
  if (text === '') return { ok: false, reason: 'the reply is empty' };
  for (const [via, read] of READERS) {
    const calls = read(text);
    if (calls !== null && calls.length > 0) return { ok: true, calls: calls.map(normalizeCall), via };
  }
  return { ok: false, reason: 'no tool calls could be read from the reply' };
}

type Read = (text: string) => unknown[] | null;

const READERS: [ReadVia, Read][] = [
  ['tool_call_tags', toolCallTags],
  ['code_fence', codeFences],
  ['json', (text) => asList(tryJson(text))],
  ['json_lines', jsonLines],
  ['embedded_json', embeddedJson],
  ['python', python],
];

function toolCallTags(text: string): unknown[] | null {
  const blocks = [...text.matchAll(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g)].map((m) => m[1].trim());
  if (blocks.length === 0) return null;
  const calls = blocks.flatMap((block) => asList(tryJson(block) ?? tryPython(block)) ?? []);
  return calls.length > 0 ? calls : null;
}

function codeFences(text: string): unknown[] | null {
  const blocks = [...text.matchAll(/```[a-zA-Z]*\s*\n?([\s\S]*?)```/g)].map((m) => m[1].trim());
  const calls = blocks.flatMap((block) => asList(tryJson(block)) ?? jsonLines(block) ?? python(block) ?? []);
  return calls.length > 0 ? calls : null;
}

function jsonLines(text: string): unknown[] | null {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length < 2) return null;
  const values = lines.map(tryJson);
  return values.every((v) => v !== undefined && v !== null && typeof v === 'object') ? values : null;
}

/** The first `[` or `{` whose balanced span (strings respected) parses as JSON. */
function embeddedJson(text: string): unknown[] | null {
  for (let start = 0; start < text.length; start++) {
    if (text[start] !== '[' && text[start] !== '{') continue;
    const end = balancedEnd(text, start);
    if (end < 0) continue;
    const value = asList(tryJson(text.slice(start, end + 1)));
    if (value) return value;
  }
  return null;
}

function python(text: string): unknown[] | null {
  try {
    return readCallExpressions(text);
  } catch {
    return asList(tryPython(text));
  }
}

/** The index of the bracket that closes the one at `start`, or -1. */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"') quote = c;
    else if (c === '[' || c === '{') stack.push(c === '[' ? ']' : '}');
    else if (c === ']' || c === '}') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function tryPython(text: string): unknown {
  try {
    return readPythonLiteral(text);
  } catch {
    return undefined;
  }
}

/** An array as it is, one object as a list of one; anything else is not calls. */
function asList(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value as unknown[];
  if (value !== null && typeof value === 'object') return [value];
  return null;
}

function normalizeCall(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const raw = value as Record<string, unknown>;
  const inner =
    raw.function !== null && typeof raw.function === 'object' ? (raw.function as Record<string, unknown>) : raw;
  if (typeof inner.name !== 'string') return value;
  let args = inner.arguments ?? inner.parameters ?? inner.args ?? {};
  if (typeof args === 'string') args = tryJson(args) ?? args;
  // Native tool calls have nowhere to put a call's label but among its arguments.
  let label = raw.label ?? inner.label;
  if (label === undefined && args !== null && typeof args === 'object' && !Array.isArray(args)) {
    const { label: inArguments, ...rest } = args as Record<string, unknown>;
    if (typeof inArguments === 'string') [label, args] = [inArguments, rest];
  }
  const id = raw.id ?? inner.id;
  return {
    name: inner.name,
    arguments: args,
    // A label written as its own reference ("$FILTER_1$") names the same output.
    ...(typeof label === 'string' ? { label: label.replace(/^\$(.*)\$$/, '$1') } : {}),
    ...(typeof id === 'string' ? { id } : {}),
  };
}
