import type {
  DatabaseInfo,
  Formulation,
  GoldResult,
  Instance,
  KeyDescription,
  SequenceFormulation,
  SlotSequence,
  SqlValue,
  ToolCall,
  ToolOutput,
  ToolPool,
  ToolSpec,
} from '../core/model.js';
import { keysForInitialization, toOpenApi } from '../runtime/slot/specs.js';
import { writeArtifact, type DatabaseEmitInput, type EmittedFile } from './emit-artifact.js';
import { jsonlText, jsonText } from './files.js';
import type { AcceptedSample } from './samples.js';
import type { Verification } from '../verifiers/checks.js';

/** The formulations whose item results are sequences. */
type SequenceResultKey = SequenceFormulation;

/**
 * The artifacts of one database for a tool-sequence formulation: its samples (JSONL,
 * instance order), its tool specs (OpenAI function format) and their OpenAPI document (REST:
 * emit-rest.ts). Every write is atomic; every byte is a function of the samples and the config.
 */

/** What tells one sequence formulation's artifacts from another's (its entry in formulations.ts). */
export interface SequenceEmit {
  /** Fields of its sample records after the common ones. */
  sampleFields(sequence: SlotSequence): Record<string, unknown>;
  /** The keys a sample's tools are specified over, beyond the database's own. */
  ownKeys(db: DatabaseInfo, sequence: SlotSequence, pool: ToolPool): KeyDescription[];
  /** The database's published tools, from its accepted sequences and key universe. */
  databaseTools(sequences: readonly SlotSequence[], keys: KeyDescription[], pool: ToolPool): ToolSpec[];
  /**
   * What a live runtime needs beyond the specs to run the published calls (SEL: which SLOT
   * call each tool name stands for), as `tools/<f>/<db>.bindings.json`; absent when nothing is.
   */
  runtimeBindings?(samples: readonly { id: string; sequence: SlotSequence }[]): unknown;
}

/** Where a formulation's runtime bindings of a database are published. */
export function bindingsFile(formulation: Formulation, dbId: string): string {
  return `tools/${formulation}/${dbId}.bindings.json`;
}

/** One JSONL line, keys in the published order. */
export function sampleRecord(
  datasetName: string,
  formulation: Formulation,
  instance: Instance,
  sample: AcceptedSample,
  emit: Pick<SequenceEmit, 'sampleFields'>,
): Record<string, unknown> {
  return {
    sample_id: instance.id,
    dataset_name: datasetName,
    formulation,
    input: instance.question,
    evidence: instance.evidence,
    query: instance.sql,
    ...goldAnswerFields(sample.gold),
    initialization_step: sample.sequence.initialization,
    output: sample.sequence.calls,
    answer_labels: sample.sequence.answerLabels,
    output_after_executing_api: answerJson(sample.outputs),
    difficulty: instance.difficulty,
    verification: verificationField(sample.verification, sample.gold),
    ...emit.sampleFields(sample.sequence),
  };
}

/**
 * The gold's answer as published; for a nondeterministic gold that was kept, every answer it
 * gave; and whenever rows tie on the sort keys of an ordered answer, the tie groups
 * (`positions[i]`: the group whose rows may stand at answer row i), so that an evaluator
 * accepts what the verification accepted.
 */
export function goldAnswerFields(gold: GoldResult): Record<string, unknown> {
  return {
    gold_answer: gold.rows,
    ...(gold.acceptable ? { acceptable_answers: gold.acceptable } : {}),
    ...(gold.ties ? { gold_ties: gold.ties } : {}),
  };
}

/** The checks' verdicts, and what agreeing with this gold proves (`strength`). */
export function verificationField(verification: Verification, gold: GoldResult): Record<string, unknown> {
  return gold.strength ? { ...verification, strength: gold.strength } : verification;
}

/** Answer outputs as plain JSON: scalar → value, list → array, table → records; one answer → itself. */
export function answerJson(outputs: readonly ToolOutput[]): unknown {
  const plain = outputs.map(plainOutput);
  return plain.length === 1 ? plain[0] : plain;
}

/** One output as plain JSON: scalar → value, list → array, table → records. */
export function plainOutput(output: ToolOutput): SqlValue | SqlValue[] | Record<string, SqlValue>[] {
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
function databaseKeys(
  db: DatabaseInfo,
  sequences: readonly SlotSequence[],
  pool: ToolPool,
  emit: SequenceEmit,
): KeyDescription[] {
  const everyTable: ToolCall = {
    name: 'initialize_active_data',
    label: 'starting_table_var',
    arguments: { database: db.dbId, tables: db.tables.map((t) => ({ alias: t.name, table: t.name })), joins: [] },
  };
  const keys = keysForInitialization(db, [everyTable]);
  const seen = new Set(keys.map((k) => k.key));
  for (const sequence of sequences) {
    for (const k of emit.ownKeys(db, sequence, pool)) {
      if (seen.has(k.key)) continue;
      seen.add(k.key);
      keys.push(k);
    }
  }
  return keys;
}

export async function emitSequences(
  input: DatabaseEmitInput,
  formulation: SequenceResultKey,
  emit: SequenceEmit,
): Promise<EmittedFile[]> {
  const { db, datasetName, outDir } = input;
  const accepted = input.items.flatMap((item) => {
    const result = item.results[formulation];
    return result?.ok ? [{ instance: item.instance, sample: result }] : [];
  });
  const lines = accepted.map(({ instance, sample }) => sampleRecord(datasetName, formulation, instance, sample, emit));
  const files = [await writeArtifact(outDir, `${formulation}/${db.dbId}.jsonl`, jsonlText(lines))];
  const sequences = accepted.map((a) => a.sample.sequence);
  const keys = databaseKeys(db, sequences, input.config.pool, emit);
  const tools = emit.databaseTools(sequences, keys, input.config.pool);
  files.push(await writeArtifact(outDir, `tools/${formulation}/${db.dbId}.json`, jsonText(tools)));
  const openapi = toOpenApi(tools, {
    title: `${datasetName} ${formulation.toUpperCase()} tools: ${db.dbId}`,
    version: input.version,
  });
  files.push(await writeArtifact(outDir, `openapi/${formulation}/${db.dbId}.json`, jsonText(openapi)));
  if (emit.runtimeBindings) {
    const bindings = emit.runtimeBindings(accepted.map((a) => ({ id: a.instance.id, sequence: a.sample.sequence })));
    files.push(await writeArtifact(outDir, bindingsFile(formulation, db.dbId), jsonText(bindings)));
  }
  return files;
}
