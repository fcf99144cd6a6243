import { z } from 'zod';
import { callsRest } from '../../core/model.js';
import { vakraUuid } from '../../eval/predictions/vakra-uuid.js';
import type { ExportSample } from '../sample.js';
import { publishedSequence, type PublishedSequence, type PublishedTranslation } from '../published/calls.js';
import { VAKRA } from '../published/dialects.js';
import { firstColumnsOf } from '../published/first-columns.js';

/**
 * A sample as IBM VAKRA's benchmark files hold it (IBM/vakra: benchmark/runner_helpers.py reads
 * `input/<domain>.json`, evaluator/ reads `output/<domain>.json`,
 * environment/configs/generate_task_1_tool_universe_mapping.py writes the universe mapping):
 *
 * - input: `{uuid, domain, num_turns, dialogue: {turns: [{turn_id, query}]}, additional_instructions}`
 * - ground truth: `{uuid, domain, output: [{turn_id, query, answer, sequence: {tool_call, tool_response}}]}`,
 *   `sequence` a dict (VAKRA's mapping script reads `.get("tool_call")` of it), the same turn id
 *   as the input's (its scorer pairs turns by id), `answer` the SQLite answer's rows.
 * - SLOT and SEL are capability 1 (`capability_1_bi_apis`, one universe per sample, in the
 *   mapping as `{domain, server_type, init_args, query}`); REST is capability 2
 *   (`capability_2_dashboard_apis`: the endpoint's operationId and its query parameters); a
 *   chain is capability 3 (`capability_3_multihop_reasoning`, served by the same REST MCP
 *   server as capability 2: its hops in order, each with the literal value it was given, as
 *   VAKRA resolves no reference, and each hop's response).
 *
 * A uuid is `<formulation>-<db>-<sample id>`: stable across runs, and SLOT's and SEL's of one
 * question differ (both live in one domain file and one mapping). VAKRA has no refusal items
 * and lists each item once, so negatives and weighted copies are left out.
 */

export const CAPABILITY_1 = 'capability_1_bi_apis';
export const CAPABILITY_2 = 'capability_2_dashboard_apis';
export const CAPABILITY_3 = 'capability_3_multihop_reasoning';
export const TURN_ID = 1 as const;

export interface VakraExample {
  capability: typeof CAPABILITY_1 | typeof CAPABILITY_2 | typeof CAPABILITY_3;
  input: VakraInput;
  output: VakraOutput;
  /** Capability 1: the sample's tool universe, as the mapping YAML holds it. */
  universe?: VakraUniverse;
  departures: string[];
}

export function vakraUnsupported(sample: ExportSample): string | undefined {
  if (sample.negative) return 'VAKRA has no refusal items';
  if (sample.copy > 0) return 'a weighted copy: VAKRA lists each item once';
  const translated = translationOf(sample);
  return translated && 'problem' in translated ? translated.problem : undefined;
}

export function vakraExample(sample: ExportSample): VakraExample {
  const { item } = sample;
  const uuid = vakraUuid(sample.item);
  const turn = { turn_id: TURN_ID, query: item.question };
  const input = {
    uuid,
    domain: item.db,
    num_turns: 1 as const,
    dialogue: { turns: [turn] },
    additional_instructions: '',
  };
  const answer = item.gold.rows.map((row) => [...row]);
  const translated = translationOf(sample);
  if (!translated) {
    const tool_call = item.goldCalls.map((call) => ({ name: call.name, arguments: call.arguments }));
    const sequence = { tool_call, tool_response: sample.outputs };
    return {
      capability: item.formulation === 'chain' ? CAPABILITY_3 : CAPABILITY_2,
      input,
      output: { uuid, domain: item.db, output: [{ ...turn, answer, sequence }] },
      departures: [],
    };
  }
  const { init, calls, responses, departures } = translated as PublishedSequence;
  // VAKRA's calls carry no label: tables pass by handle.
  const tool_call = [init, ...calls].map((call) => ({ name: call.name, arguments: call.arguments }));
  const tool_response = responses;
  return {
    capability: CAPABILITY_1,
    input,
    output: { uuid, domain: item.db, output: [{ ...turn, answer, sequence: { tool_call, tool_response } }] },
    universe: {
      domain: item.db,
      server_type: item.formulation === 'sel' ? 'selection' : 'slot_filling',
      init_args: init.arguments,
      query: item.question,
    },
    departures,
  };
}

/** SLOT/SEL: the calls in VAKRA's vocabulary (once per sample); REST and chain: undefined (their calls are VAKRA's as they are). */
const translations = new WeakMap<ExportSample, PublishedTranslation>();
function translationOf(sample: ExportSample): PublishedTranslation | undefined {
  if (callsRest(sample.item.formulation)) return undefined;
  let translated = translations.get(sample);
  if (!translated) {
    const columns = firstColumnsOf(sample.source.databases, sample.item.db);
    translated = columns
      ? publishedSequence(sample.item, sample.outputs, VAKRA, (table) => columns.get(table.toLowerCase()))
      : { problem: `no ${sample.item.db}.sqlite under ${sample.source.databases}` };
    translations.set(sample, translated);
  }
  return translated;
}

// ---------------------------------------------------------------------------------------
// Schemas (validate_output.py's record shapes, and the ground truth's)

const CallSchema = z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }).strict();
const TurnSchema = z.object({ turn_id: z.literal(TURN_ID), query: z.string().min(1) }).strict();

const VakraInputSchema = z
  .object({
    uuid: z.string().min(1),
    domain: z.string().min(1),
    num_turns: z.literal(1),
    dialogue: z.object({ turns: z.array(TurnSchema).length(1) }).strict(),
    additional_instructions: z.string(),
  })
  .strict();

const VakraOutputSchema = z
  .object({
    uuid: z.string().min(1),
    domain: z.string().min(1),
    output: z
      .array(
        TurnSchema.extend({
          answer: z.array(z.array(z.unknown())),
          sequence: z
            .object({ tool_call: z.array(CallSchema).min(1), tool_response: z.array(z.unknown()) })
            .strict()
            .refine((s) => s.tool_call.length === s.tool_response.length, 'one tool_response per tool_call'),
        }).strict(),
      )
      .length(1),
  })
  .strict();

const VakraUniverseSchema = z
  .object({
    domain: z.string().min(1),
    server_type: z.enum(['slot_filling', 'selection']),
    init_args: z.record(z.string(), z.unknown()),
    query: z.string(),
  })
  .strict();

type VakraInput = z.infer<typeof VakraInputSchema>;
type VakraOutput = z.infer<typeof VakraOutputSchema>;
type VakraUniverse = z.infer<typeof VakraUniverseSchema>;

export const VakraExampleSchema = z
  .object({
    capability: z.enum([CAPABILITY_1, CAPABILITY_2, CAPABILITY_3]),
    input: VakraInputSchema,
    output: VakraOutputSchema,
    universe: VakraUniverseSchema.optional(),
    departures: z.array(z.string()),
  })
  .strict()
  .refine((e) => e.input.uuid === e.output.uuid, 'input and ground truth share a uuid')
  .refine((e) => (e.capability === CAPABILITY_1) === (e.universe !== undefined), 'capability 1 samples have a universe')
  .refine(
    (e) => e.capability !== CAPABILITY_1 || e.output.output[0].sequence.tool_call[0].name === 'initialize_active_data',
    'capability 1 ground truth starts with initialize_active_data',
  );
