import type { LiveApiBenchLayout } from '../config/schema.js';
import type { Formulation, ToolSpec } from '../core/model.js';
import { sharedPart, type PublishedTool, type SequenceExample } from './live-api-bench.js';
import { keyDescriptions, type KeyDescription } from './published/key-descriptions.js';
import { INITIALIZE } from '../eval/predictions/published-names.js';
import type { ExportSample } from './sample.js';
import { perObject } from '../core/per-object.js';
import type { SplitName } from './splits.js';

/**
 * The file layouts of Live API-Bench's SLOT/SEL samples (REST's files are the same in every
 * layout). Each layout's record is made from the `records` layout's record
 * (`liveApiBenchExample`, checked by its schema), so the gold answers, calls and negatives are
 * the same in all three:
 *
 * - `records`: `<slot|sel>/<split>/<db>.json`, one JSON array per database, the init call
 *   apart in `initialization_step`, the tools trimmed to `{description, name, arguments}`.
 * - `builder` (IBM/live-api-bench's builder, `main_fcn.py`, whose `output/<slot|sel>/<db>.json`
 *   a split folder stands for): `<split>/<slot|sel>/<db>.json`, a bare JSON array of records
 *   whose `output` starts with the init call, with `key_values_and_descriptions` and no tools.
 * - `m3` (IBM/m3-train-eval's reader, `model_benchmarking_utils.generate_dataset_payload`, which
 *   takes the database from the file name): `<split>/slot_filling_bird_<db>.json` (SLOT) and
 *   `<split>/sequencing_bird_<db>.json` (SEL), each `{"data": [...]}`, records whose `output`
 *   starts with the init call and whose `tools` are full specs, `initialize_active_data`'s too.
 */

/** Where a layout writes a SLOT/SEL file, under `live-api-bench/`. */
export function layoutPath(layout: LiveApiBenchLayout, formulation: Formulation, split: SplitName, db: string): string {
  switch (layout) {
    case 'records':
      return `${formulation}/${split}/${db}.json`;
    case 'builder':
      return `${split}/${formulation}/${db}.json`;
    case 'm3':
      return `${split}/${formulation === 'sel' ? 'sequencing' : 'slot_filling'}_bird_${db}.json`;
  }
}

/** A file's content in a layout, from its records. */
export function layoutFile(layout: LiveApiBenchLayout, records: readonly unknown[]): unknown {
  return layout === 'm3' ? { data: records } : records;
}

/** IBM/live-api-bench's builder record: the init call first in `output`, the starting table's keys described, no tools. */
export interface BuilderRecord {
  query: string;
  input: string;
  dataset_name: string;
  sample_id: number | string;
  gold_answer: SequenceExample['gold_answer'];
  output: SequenceExample['output'];
  key_values_and_descriptions: KeyDescription[];
  evidence: string;
  difficulty: string | null;
  negative: boolean;
  expected_reply?: string;
}

/** IBM/m3-train-eval's generation record: the builder's, with the tools as full specs. */
export type M3Record = BuilderRecord & { tools: M3Tool[] };

export interface M3Tool {
  name: string;
  description: string;
  parameters: { type: 'object'; properties: Record<string, unknown>; required: string[] };
}

/** A SLOT/SEL record (the `records` layout's, checked) in a layout's form. */
export function layoutRecord(
  layout: LiveApiBenchLayout,
  example: SequenceExample,
  sample: ExportSample,
): SequenceExample | BuilderRecord | M3Record {
  if (layout === 'records') return example;
  const { initialization_step, output, tools, ...rest } = example;
  const record: BuilderRecord = {
    query: rest.query,
    input: rest.input,
    dataset_name: rest.dataset_name,
    sample_id: rest.sample_id,
    gold_answer: rest.gold_answer,
    output: [initialization_step, ...output],
    key_values_and_descriptions: keyDescriptions(
      sample.source.databases,
      sample.item.db,
      initialization_step.arguments,
    ),
    evidence: rest.evidence,
    difficulty: rest.difficulty,
    negative: rest.negative,
    ...(rest.expected_reply !== undefined ? { expected_reply: rest.expected_reply } : {}),
  };
  if (layout === 'builder') return record;
  const { key_values_and_descriptions, evidence, difficulty, negative, expected_reply, ...head } = record;
  return {
    ...head,
    tools: [INITIALIZE_SPEC, ...tools.map((tool) => m3Tool(tool, sample.tools))],
    key_values_and_descriptions,
    evidence,
    difficulty,
    negative,
    ...(expected_reply !== undefined ? { expected_reply } : {}),
  };
}

/**
 * A trimmed tool as a full spec: the arguments as `parameters.properties`, `required` as
 * nl2api's spec of that name requires (those it still has), or every argument for a tool
 * nl2api has under another name (SEL's published names), as the published specs list every
 * documented parameter as required. Once per trimmed tool (samples share them): its text too.
 */
function m3Tool(tool: PublishedTool, specs: readonly ToolSpec[]): M3Tool {
  return m3Tools(tool)(specs);
}

const m3Tools = perObject((tool: PublishedTool) => {
  let made: M3Tool | undefined;
  return (specs: readonly ToolSpec[]): M3Tool => {
    if (made) return made;
    const spec = specs.find((s) => s.function.name === tool.name);
    const names = Object.keys(tool.arguments);
    const required = spec ? ((spec.function.parameters as { required?: string[] }).required ?? []) : names;
    made = sharedPart({
      name: tool.name,
      description: tool.description,
      parameters: {
        type: 'object' as const,
        properties: tool.arguments,
        required: required.filter((name) => names.includes(name)),
      },
    });
    return made;
  };
});

/**
 * The published `initialize_active_data` as a spec (its signature, not nl2api's: a replay runs
 * the record's own init call, a model is never asked to make it).
 */
const INITIALIZE_SPEC: M3Tool = sharedPart({
  name: INITIALIZE,
  description:
    'Builds the starting table: reads the tables of alias_to_table_dict from the database file and joins them ' +
    'as condition_sequence says. Returns the table, its columns named <modified table name>_<column> ' +
    '(bare column names for one table without an alias).',
  parameters: {
    type: 'object',
    properties: {
      condition_sequence: {
        type: 'array',
        description: 'The joins, in order: [left "alias.column", right "alias.column", "INNER" or "LEFT"].',
      },
      alias_to_table_dict: {
        type: 'object',
        description: 'Each alias → {original_table_name, modified_table_name}.',
      },
      database_path: { type: 'string', description: 'The SQLite database file.' },
    },
    required: ['condition_sequence', 'alias_to_table_dict', 'database_path'],
  },
});
