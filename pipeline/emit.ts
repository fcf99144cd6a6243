import { selToolSpecs } from '../runtime/sel/specs.js';
import { keysForInitialization, keysForSequenceOrStart, slotToolSpecs, toOpenApi } from '../runtime/slot/specs.js';
import type { SequenceFormulation } from './formulation.js';
import { writeArtifact, type DatabaseEmitInput, type EmittedFile } from './emit-artifact.js';
import { emitRestDatabase } from './emit-rest.js';
import { jsonlText, jsonText } from './files.js';
import type {
  DatabaseInfo,
  Instance,
  KeyDescription,
  SelBinding,
  SelSequence,
  SqlValue,
  ToolCall,
  ToolOutput,
  ToolPool,
  ToolSpec,
} from '../core/model.js';
import type { AcceptedSample } from './samples.js';

/**
 * The artifacts of one database: per formulation its samples (JSONL, instance order), its
 * tool specs (OpenAI function format) and their OpenAPI document (REST: emit-rest.ts). Every write is atomic;
 * every byte is a function of the samples and the config.
 */

/** One JSONL line, keys in the published order. */
export function sampleRecord(
  datasetName: string,
  formulation: SequenceFormulation,
  instance: Instance,
  sample: AcceptedSample,
): Record<string, unknown> {
  const record: Record<string, unknown> = {
    sample_id: instance.id,
    dataset_name: datasetName,
    formulation,
    input: instance.question,
    evidence: instance.evidence,
    query: instance.sql,
    gold_answer: sample.gold.rows,
    initialization_step: sample.sequence.initialization,
    output: sample.sequence.calls,
    answer_labels: sample.sequence.answerLabels,
    output_after_executing_api: answerJson(sample.outputs),
    difficulty: instance.difficulty,
    verification: sample.verification,
  };
  if (formulation === 'sel') record.tools = Object.keys((sample.sequence as SelSequence).bindings);
  return record;
}

/** Answer outputs as plain JSON: scalar → value, list → array, table → records; one answer → itself. */
export function answerJson(outputs: readonly ToolOutput[]): unknown {
  const plain = outputs.map(plainOutput);
  return plain.length === 1 ? plain[0] : plain;
}

function plainOutput(output: ToolOutput): SqlValue | SqlValue[] | Record<string, SqlValue>[] {
  if (output.kind === 'scalar') return output.value;
  if (output.kind === 'list') return output.values;
  return output.rows.map((row) => Object.fromEntries(output.columns.map((c, i) => [c, row[i]])));
}

/**
 * The key universe of a database's published tools: every `<table>_<column>` key, then each
 * accepted sample's own keys that this lacks (repeated-table keys, derived keys such as
 * `count_rows`), in sample order. Every published sample is valid against its database's
 * published tool specs (test/pipeline/emit.test.ts holds it to that).
 */
export function databaseKeys(
  db: DatabaseInfo,
  formulation: SequenceFormulation,
  samples: readonly AcceptedSample[],
  pool: ToolPool,
): KeyDescription[] {
  const everyTable: ToolCall = {
    name: 'initialize_active_data',
    label: 'starting_table_var',
    arguments: { database: db.dbId, tables: db.tables.map((t) => ({ alias: t.name, table: t.name })), joins: [] },
  };
  const keys = keysForInitialization(db, [everyTable]);
  const seen = new Set(keys.map((k) => k.key));
  for (const { sequence } of samples) {
    const own =
      formulation === 'sel'
        ? [...keysForInitialization(db, sequence.initialization), ...(sequence as SelSequence).derivedKeys]
        : keysForSequenceOrStart(db, sequence, pool);
    for (const k of own) {
      if (seen.has(k.key)) continue;
      seen.add(k.key);
      keys.push(k);
    }
  }
  return keys;
}

/** The union of the accepted samples' SEL tools, by name (first binding wins), over the database's keys, sorted. */
function selToolsOfDatabase(samples: readonly AcceptedSample[], keys: KeyDescription[], pool: ToolPool): ToolSpec[] {
  const bindings: Record<string, SelBinding> = {};
  for (const sample of samples) {
    for (const [name, binding] of Object.entries((sample.sequence as SelSequence).bindings)) bindings[name] ??= binding;
  }
  return selToolSpecs(bindings, keys, pool).sort((a, b) => (a.function.name < b.function.name ? -1 : 1));
}

export async function emitDatabase(input: DatabaseEmitInput): Promise<EmittedFile[]> {
  const files: EmittedFile[] = [];
  for (const formulation of input.formulations) {
    files.push(...(formulation === 'rest' ? await emitRestDatabase(input) : await emitSequences(input, formulation)));
  }
  return files;
}

async function emitSequences(input: DatabaseEmitInput, formulation: SequenceFormulation): Promise<EmittedFile[]> {
  const { db, datasetName, outDir } = input;
  const accepted = input.items.flatMap((item) => {
    const result = item.results[formulation];
    return result?.ok ? [{ instance: item.instance, sample: result }] : [];
  });
  const lines = accepted.map(({ instance, sample }) => sampleRecord(datasetName, formulation, instance, sample));
  const files = [await writeArtifact(outDir, `${formulation}/${db.dbId}.jsonl`, jsonlText(lines))];
  const samples = accepted.map((a) => a.sample);
  const keys = databaseKeys(db, formulation, samples, input.config.pool);
  const tools =
    formulation === 'slot' ? slotToolSpecs(keys, input.config.pool) : selToolsOfDatabase(samples, keys, input.config.pool);
  files.push(await writeArtifact(outDir, `tools/${formulation}/${db.dbId}.json`, jsonText(tools)));
  const openapi = toOpenApi(tools, { title: `${datasetName} ${formulation.toUpperCase()} tools: ${db.dbId}`, version: input.version });
  files.push(await writeArtifact(outDir, `openapi/${formulation}/${db.dbId}.json`, jsonText(openapi)));
  return files;
}
