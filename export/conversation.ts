import { callsRest, type ToolSpec } from '../core/model.js';
import { plannedChain } from '../eval/chain-references.js';
import { shortlist } from '../eval/tool-view.js';
import { keyListsApart } from './live-api-bench.js';
import { REFUSAL } from './negatives.js';
import { answerInWords, type ConversationInput } from './openai-chat.js';
import type { ExportSample } from './sample.js';
import { perObject } from '../core/per-object.js';

/**
 * A sample as the conversation formats (openai, hermes, xlam) show it: its question, calls,
 * outputs and answer, and the tools it offers, sized for training (issue 32): a SLOT or SEL sample's own tools (key enums already narrowed to its own keys,
 * live-api-bench.ts `ownTools`) cut to the tools its calls use and a few distractors drawn
 * with a seed fixed by the sample's key, and every key described once, in a glossary of one
 * short line per key, rather than in the key list of every key argument of every tool (on
 * BIRD dev those lists were over half of a SLOT example's tokens). REST examples are
 * shortlisted already (plan.ts, `--rest-tools`). Live API-Bench and the nl2api records keep
 * the sample's tools as the published format has them.
 */

/** The conversation a sample is, for the chat formats: once per sample, every format of an example reads the same. */
export const conversationOf = perObject((sample: ExportSample): ConversationInput => {
  const { item } = sample;
  const { tools, keys } = conversationTools(sample);
  const calls = sample.negative ? [] : item.goldCalls;
  return {
    question: item.question,
    evidence: item.evidence,
    startLabels: item.initialization.map((call) => call.label),
    calls,
    plan: item.hops ? plannedChain(calls, item.hops, (k) => calls[k - 1].label) : calls,
    outputs: sample.negative ? [] : sample.outputs,
    tools,
    keys,
    answer: sample.negative ? REFUSAL : answerInWords(item.gold.rows),
  };
});

/**
 * The most characters of JSON a chain conversation shows of a response a later hop takes its
 * value from: shown whole (a model cannot take the largest of rows it was not shown), so a
 * chain with a longer one is left out of the conversation formats.
 */
export const MAX_BRIDGED_RESPONSE_CHARS = 8_000;

/** Why a conversation format has no form for the sample: a chain response too long to show whole. */
export function conversationUnsupported(sample: ExportSample): string | undefined {
  if (sample.item.formulation !== 'chain' || sample.negative) return undefined;
  const bridged = sample.outputs.slice(0, -1);
  const long = bridged.findIndex((output) => JSON.stringify(output).length > MAX_BRIDGED_RESPONSE_CHARS);
  return long < 0
    ? undefined
    : `hop ${long + 1}'s response is over ${MAX_BRIDGED_RESPONSE_CHARS} characters of JSON, and hop ${long + 2} takes its value from all of it`;
}

interface ConversationTools {
  tools: ToolSpec[];
  /** `<key>: <what it is>`, one line per key the tools take (those its name says all of left out), in the order the tools name them. */
  keys: string[];
}

/** Tools a SLOT/SEL example offers besides those its calls use (SEL: mostly other keys' getters). */
export const DISTRACTORS = 3;

/** The longest key description a glossary line keeps (BIRD's value descriptions run to paragraphs). */
export const MAX_KEY_DESCRIPTION = 80;

function conversationTools(sample: ExportSample): ConversationTools {
  const { item } = sample;
  if (callsRest(item.formulation)) return { tools: sample.tools, keys: [] };
  // A negative offers as many tools as its question's sample, none that answers it (plan.ts).
  const needed = new Set(item.goldCalls.map((call) => call.name)).size;
  const offered = shortlist(sample.tools, sample.negative ? [] : item.goldCalls, sample.key, needed + DISTRACTORS);
  // A key is described alike in every narrowing of its database's specs: each line is made once per source.
  const glossary = glossaries(sample.source);
  const lines = new Map<string, string | undefined>();
  for (const tool of offered)
    for (const [key, description] of keyListsApart(tool).keys)
      if (!lines.has(key)) lines.set(key, glossaryLine(glossary, key, description));
  return {
    tools: canonicalList(
      sample.tools,
      offered.map((tool) => keyListsApart(tool).spec),
    ),
    keys: [...lines.values()].filter((line) => line !== undefined),
  };
}

/** A key's glossary line (undefined when its name says all), once per source (`glossaries`). */
function glossaryLine(glossary: Map<string, string | undefined>, key: string, description: string): string | undefined {
  const id = `${key}\u0000${description}`;
  if (!glossary.has(id)) glossary.set(id, saysMore(key, description) ? `${key}: ${shortened(description)}` : undefined);
  return glossary.get(id);
}

const glossaries = perObject<ExportSample['source'], Map<string, string | undefined>>(() => new Map());

/** Whether a description says more than its key's name (a column described by its own name is not listed). */
function saysMore(key: string, description: string): boolean {
  const bare = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
  return !bare(key).endsWith(bare(description));
}

/** One line, at most MAX_KEY_DESCRIPTION characters, cut at a word. */
export function shortened(description: string): string {
  const line = description.replace(/\s+/g, ' ').trim();
  if (line.length <= MAX_KEY_DESCRIPTION) return line;
  const cut = line.lastIndexOf(' ', MAX_KEY_DESCRIPTION - 1);
  return `${line.slice(0, cut > 0 ? cut : MAX_KEY_DESCRIPTION - 1)}…`;
}

/**
 * One array per distinct list of spec objects (cut from the same list): what the formats make
 * once per list (a Hermes prompt, an xLAM tools string) is found for every sample offering it.
 */
function canonicalList(from: readonly ToolSpec[], tools: ToolSpec[]): ToolSpec[] {
  let byId = lists.get(from);
  if (!byId) lists.set(from, (byId = new Map<string, ToolSpec[]>()));
  const id = tools.map(specId).join(',');
  let list = byId.get(id);
  if (!list) byId.set(id, (list = tools));
  return list;
}

const lists = new WeakMap<readonly ToolSpec[], Map<string, ToolSpec[]>>();
let specs = 0;
const specId = perObject<ToolSpec, number>(() => ++specs);
