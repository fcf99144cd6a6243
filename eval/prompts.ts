import { hashJson, sha256 } from '../core/hash.js';
import { callsRest, type ToolCall, type ToolSpec } from '../core/model.js';
import { TRANSFORM_KINDS } from '../generators/chain/transforms.js';
import type { LlmMessage } from '../generators/llm/messages.js';
import { LruMap } from '../core/lru.js';
import { fillSlots, loadPrompt, type PromptTemplate } from '../generators/rest/prompts.js';
import type { EvalItem } from './dataset.js';

/**
 * The prompts of an evaluation, after Live API-Bench's structure: a system prompt with the
 * task, the tools (in the prompt, in the format the model family was tuned on, or bound as
 * native tools) and how to write calls; a user turn with the in-context examples (SLOT/SEL:
 * other questions of the same database with their gold calls; REST: none, BFCL style), the
 * question and its evidence. Templates are Markdown in `seeds/prompts/eval-<family>.*.md`
 * (`eval-react.*` for the agent); what differs per family is the table below.
 */

export const MODEL_FAMILIES = ['mistral', 'llama', 'qwen', 'granite', 'deepseek', 'hammer', 'gpt'] as const;
export type ModelFamily = (typeof MODEL_FAMILIES)[number];

interface FamilyFormat {
  /** Model names of the family (matched against the model id, case-insensitive). */
  pattern: RegExp;
  /** How the tool specs are listed in the prompt. */
  tools(specs: readonly ToolSpec[]): string;
  /** How the model is asked to write its calls. */
  callFormat: string;
  /** Calls written as the family writes them (in-context examples, the ReAct transcript). */
  writeCalls(calls: readonly ToolCall[]): string;
}

const jsonList = (calls: readonly ToolCall[]) => JSON.stringify(calls.map(plainCall));
const LIST_FORMAT =
  'Reply with the calls only, as a JSON list: [{"name": "<tool>", "arguments": {...}, "label": "<LABEL>"}, ...].';

const FAMILIES: Record<ModelFamily, FamilyFormat> = {
  mistral: {
    pattern: /mistral|mixtral|ministral|codestral|magistral/,
    tools: (specs) => `[AVAILABLE_TOOLS]${JSON.stringify(specs)}[/AVAILABLE_TOOLS]`,
    callFormat: `Reply with [TOOL_CALLS] followed by the calls as a JSON list: [TOOL_CALLS][{"name": "<tool>", "arguments": {...}, "label": "<LABEL>"}, ...].`,
    writeCalls: (calls) => `[TOOL_CALLS]${jsonList(calls)}`,
  },
  llama: {
    pattern: /llama/,
    tools: (specs) =>
      `Here is a list of functions in JSON format that you can invoke:\n${specs.map((s) => JSON.stringify(s)).join('\n')}`,
    callFormat:
      'Respond with the function calls as a JSON list, each in the format {"name": function name, "parameters": dictionary of argument name and its value, "label": "<LABEL>"}.',
    writeCalls: (calls) =>
      JSON.stringify(
        calls.map((c) => ({ name: c.name, parameters: c.arguments, ...(c.label ? { label: c.label } : {}) })),
      ),
  },
  qwen: {
    pattern: /qwen|qwq/,
    tools: (specs) =>
      `You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n${specs.map((s) => JSON.stringify(s)).join('\n')}\n</tools>`,
    callFormat:
      'For each function call, return a json object with function name, arguments and label within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>, "label": "<LABEL>"}\n</tool_call>',
    writeCalls: (calls) => calls.map((c) => `<tool_call>\n${JSON.stringify(plainCall(c))}\n</tool_call>`).join('\n'),
  },
  granite: {
    pattern: /granite/,
    tools: (specs) => `<|tool|>${JSON.stringify(specs)}<|/tool|>`,
    callFormat: `Reply with <|tool_call|> followed by the calls as a JSON list: <|tool_call|>[{"name": "<tool>", "arguments": {...}, "label": "<LABEL>"}, ...].`,
    writeCalls: (calls) => `<|tool_call|>${jsonList(calls)}`,
  },
  deepseek: {
    pattern: /deepseek/,
    tools: (specs) => `Tools:\n\`\`\`json\n${JSON.stringify(specs, null, 1)}\n\`\`\``,
    callFormat:
      'Reply with the calls as a JSON list in a ```json block: [{"name": "<tool>", "arguments": {...}, "label": "<LABEL>"}, ...].',
    writeCalls: (calls) => `\`\`\`json\n${jsonList(calls)}\n\`\`\``,
  },
  hammer: {
    pattern: /hammer/,
    tools: (specs) => JSON.stringify(specs.map((s) => s.function)),
    callFormat:
      'The output MUST strictly adhere to the following JSON format, and NO other text MUST be included:\n```\n[{"name": "func_name1", "arguments": {"argument1": "value1"}, "label": "<LABEL>"}, ...]\n```',
    writeCalls: (calls) => `\`\`\`\n${jsonList(calls)}\n\`\`\``,
  },
  gpt: {
    pattern: /gpt|o[134]-|^o[134]$/,
    tools: (specs) => `Tools (OpenAI function format):\n${JSON.stringify(specs)}`,
    callFormat: LIST_FORMAT,
    writeCalls: jsonList,
  },
};

/** The family a model id belongs to (the generic GPT-style prompt when none matches). */
export function familyOf(modelId: string): ModelFamily {
  const id = modelId.toLowerCase();
  return MODEL_FAMILIES.find((f) => f !== 'gpt' && FAMILIES[f].pattern.test(id)) ?? 'gpt';
}

export interface PromptSettings {
  family: ModelFamily;
  /** `native`: tools bound through the provider's tool-calling API, not listed in the prompt. */
  tools: 'native' | 'prompt';
  mode: 'direct' | 'react';
  budget: number;
}

/**
 * What each formulation tells the model about its tools and data, and how a call uses an
 * earlier call's output: the one convention of call-names.ts, worded for how the model
 * calls (native tool calls have ids and no labels; ReAct results carry a handle).
 */
function taskNote(item: EvalItem, settings: PromptSettings): string {
  if (item.formulation === 'rest') return REST_TOOLS;
  if (item.formulation === 'chain') return [REST_TOOLS, CHAIN_NOTE, CHAIN_REFERENCES[settings.mode]].join(' ');
  const starts = item.initialization.map((c) => `"$${c.label}$"`).join(', ');
  return [
    `The data is in ${starts || '"$starting_table_var$"'}: pass it as the data source of your first call.`,
    REFERENCES[settings.mode][settings.tools],
    'The answer is the output of the calls whose output no later call uses.',
  ].join(' ');
}

const REST_TOOLS =
  'The tools are the endpoints of a REST API over one database; a call is answered with the rows the endpoint returns.';
const CHAIN_NOTE =
  "The question takes several calls in turn: a later call's argument is a value taken from an earlier call's response.";
/** chain-references.ts: a field of an earlier response, made one value by a transform when it has several rows. */
const CHAIN_REFERENCE = `pass "$<handle>.<field>$" for the field's value in that response (it must hold one row), or "$<handle>.<field>|<transform>$" to make one value of the field over its rows, <transform> one of ${TRANSFORM_KINDS.filter((k) => k !== 'value').join(', ')}`;
const CHAIN_REFERENCES: Record<PromptSettings['mode'], string> = {
  direct: `Write all the calls now, in order; for a value from an earlier response, ${CHAIN_REFERENCE}. A call's handle is its id, or call_<n>, n its position among your calls from 0.`,
  react: `Pass the value you read in a response, or ${CHAIN_REFERENCE}, <handle> the result's "handle". The answer is the response of the last call.`,
};
const POSITIONS = '"$call_0$" is the output of your first call, "$call_1$" of the second';
const REFERENCES: Record<PromptSettings['mode'], Record<PromptSettings['tools'], string>> = {
  direct: {
    native: `A later call uses an earlier call's output by passing "$<id>$" as an argument value, <id> the id of that tool call or call_<n>, n its position among your calls from 0 (${POSITIONS}; "$call_0.<field>$" a field of it).`,
    prompt: `A later call uses an earlier call's output by passing "$<LABEL>$" as an argument value, <LABEL> that call's "label"; a label is optional: a call without one is call_<n>, n its position among your calls from 0 (${POSITIONS}).`,
  },
  react: {
    native:
      'Each result gives its "handle": a later call uses that output by passing "$<handle>$" as an argument value ("$<handle>.<field>$" for a field of it).',
    prompt:
      'Each result gives its "handle": a later call uses that output by passing "$<handle>$" as an argument value; a call may also have a "label", then "$<label>$" names its output.',
  },
};

/** Where a template lists the tools, when they are bound natively instead. */
const NATIVE_TOOLS = 'The tools are given to you as native tools (function calling).';
/** How a model that calls tools natively is asked to call them (its tools are bound, not listed). */
const NATIVE_CALL_FORMAT: Record<PromptSettings['mode'], string> = {
  direct: 'Make the calls as tool calls, all in this one reply, in the order they must run.',
  react: 'call the next tool (or several, run in order) as tool calls.',
};

/** Rendered tool lists by family and list, with their hashes (a database's list is shared by its items and long). */
const renderedTools = new WeakMap<readonly ToolSpec[], Map<ModelFamily, { text: string; hash: string }>>();
function toolsBlock(family: ModelFamily, tools: readonly ToolSpec[]): { text: string; hash: string } {
  let byFamily = renderedTools.get(tools);
  if (!byFamily) renderedTools.set(tools, (byFamily = new Map<ModelFamily, { text: string; hash: string }>()));
  let block = byFamily.get(family);
  if (block === undefined) {
    const text = FAMILIES[family].tools(tools);
    byFamily.set(family, (block = { text, hash: sha256(text) }));
  }
  return block;
}

const templates = new Map<string, PromptTemplate>();
function template(name: string): PromptTemplate {
  let loaded = templates.get(name);
  if (!loaded) templates.set(name, (loaded = loadPrompt(name)));
  return loaded;
}

/**
 * The template texts a prompt is made from: part of each result's key, so an edited prompt is
 * asked again. Put together once per template and family (each attempt's key and prompt hash
 * have it).
 */
const sources = new Map<string, string>();
export function promptSource(settings: PromptSettings): string {
  const name = templateName(settings);
  const id = `${name}\0${settings.family}`;
  let source = sources.get(id);
  if (source === undefined) {
    const t = template(name);
    source =
      t.system +
      t.user +
      FAMILIES[settings.family].callFormat +
      JSON.stringify([REFERENCES, NATIVE_CALL_FORMAT, NATIVE_TOOLS]);
    sources.set(id, source);
  }
  return source;
}

/** The family's template for one reply; the agent's, in the words of how it calls tools. */
function templateName(settings: PromptSettings): string {
  if (settings.mode === 'direct') return `eval-${settings.family}`;
  return settings.tools === 'native' ? 'eval-react-native' : 'eval-react';
}

/** The first messages of an attempt at `item`: system and user, examples included. */
export interface RenderedPrompt {
  messages: LlmMessage[];
  /**
   * sha256 identifying the prompt: of the template and every slot's value, the tool list by
   * its own hash (computed once per list), since hashing a prompt of hundreds of KB per item
   * would cost more than the rest of the harness.
   */
  hash: string;
}

export function renderPrompt(
  item: EvalItem,
  tools: readonly ToolSpec[],
  examples: readonly EvalItem[],
  settings: PromptSettings,
): RenderedPrompt {
  const family = FAMILIES[settings.family];
  const shown = examples
    .map((ex) => `Question: ${ex.question}\nEvidence: ${ex.evidence}\nCalls: ${family.writeCalls(ex.goldCalls)}\n\n`)
    .join('');
  const values: Record<string, string> = {
    task: taskNote(item, settings),
    tools: settings.tools === 'native' ? NATIVE_TOOLS : toolsBlock(settings.family, tools).text,
    call_format:
      settings.tools === 'native'
        ? NATIVE_CALL_FORMAT[settings.mode]
        : settings.mode === 'react'
          ? reactCallFormat(family)
          : family.callFormat,
    examples: shown ? `Examples:\n\n${shown}` : '',
    question: item.question,
    evidence: item.evidence || '(none)',
  };
  if (settings.mode === 'react') {
    values.budget = String(settings.budget);
    values.final_answer = callsRest(item.formulation)
      ? 'the operationId of the call whose result answers the question'
      : 'the handles of the calls whose outputs answer the question, as a JSON list, e.g. ["call_2"]';
  }
  const name = templateName(settings);
  const hashed = {
    ...values,
    tools: settings.tools === 'native' ? NATIVE_TOOLS : toolsBlock(settings.family, tools).hash,
  };
  const hash = hashJson({ template: promptSource(settings), values: hashed });
  return { messages: renderMessages(name, values, hashed), hash };
}

/** The slots of a user turn: everything else is the system prompt's. */
const USER_SLOTS = ['examples', 'question', 'evidence'];
const systemPrompts = new LruMap<string, string>(64);

/**
 * The template filled. A database's items share one system prompt (the task and the tool
 * list, hundreds of KB for SLOT): it is rendered once and the same string reused, which
 * also lets the LLM cache key find its hash (generators/llm/cache.ts).
 */
function renderMessages(name: string, values: Record<string, string>, hashed: Record<string, string>): LlmMessage[] {
  const systemKey = JSON.stringify([name, Object.entries(hashed).filter(([slot]) => !USER_SLOTS.includes(slot))]);
  const system = systemPrompts.get(systemKey);
  if (system === undefined) {
    const messages = template(name).render(values);
    systemPrompts.set(systemKey, messages[0].content);
    return messages;
  }
  return [
    { role: 'system', content: system },
    { role: 'user', content: fillSlots(template(name).user, values).trim() },
  ];
}

function reactCallFormat(family: FamilyFormat): string {
  return `Write it as the family writes one call, e.g. ${family.writeCalls([{ name: 'tool_name', arguments: { argument: 'value' }, label: 'LABEL_1' }])}`;
}

/** Calls as JSON the way a model is asked to write them (no empty label). */
export function plainCall(call: ToolCall): Record<string, unknown> {
  return { name: call.name, arguments: call.arguments, ...(call.label ? { label: call.label } : {}) };
}

/** Calls written in the family's format (for a scripted model or an oracle's reply). */
export function writeCalls(family: ModelFamily, calls: readonly ToolCall[]): string {
  return FAMILIES[family].writeCalls(calls);
}
