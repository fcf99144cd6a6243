import path from 'node:path';
import type { Config } from '../config/schema.js';
import { keysForInitialization, toOpenApi } from '../runtime/slot/specs.js';
import type { PipelineFormulation } from './formulation.js';
import { jsonlText, jsonText, writeFileAtomic } from './files.js';
import { sha256 } from './hash.js';
import type { DatabaseInfo, Instance, SelSequence, SqlValue, ToolCall, ToolOutput, ToolSpec } from './model.js';
import type { AcceptedSample, ItemResult } from './samples.js';
import { toolRegistry, type ToolRegistry } from './tool-registry.js';

/**
 * The artifacts of one database: per formulation its samples (JSONL, instance order), its
 * tool specs (OpenAI function format) and their OpenAPI document. Every write is atomic;
 * every byte is a function of the samples and the config.
 */

export interface EmittedFile {
  /** Relative to the output directory, `/`-separated. */
  path: string;
  sha256: string;
  bytes: number;
}

export async function writeArtifact(outDir: string, relative: string, content: string): Promise<EmittedFile> {
  await writeFileAtomic(path.join(outDir, ...relative.split('/')), content);
  return { path: relative, sha256: sha256(content), bytes: Buffer.byteLength(content) };
}

/** One JSONL line, keys in the published order. */
export function sampleRecord(
  datasetName: string,
  formulation: PipelineFormulation,
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

/** The SLOT pool over every column key of the database (`<table>_<column>`, with descriptions). */
export function slotToolsOfDatabase(db: DatabaseInfo, registry: ToolRegistry): ToolSpec[] {
  const everyTable: ToolCall = {
    name: 'initialize_active_data',
    label: 'starting_table_var',
    arguments: { database: db.dbId, tables: db.tables.map((t) => ({ alias: t.name, table: t.name })), joins: [] },
  };
  return registry.slotTools(keysForInitialization(db, [everyTable]));
}

/** The union of the accepted samples' SEL tool universes, by name (first definition wins), sorted. */
export function selToolsOfSamples(samples: readonly AcceptedSample[], registry: ToolRegistry): ToolSpec[] {
  const byName = new Map<string, ToolSpec>();
  for (const sample of samples) {
    const sequence = sample.sequence as SelSequence;
    for (const name of Object.keys(sequence.bindings)) {
      if (!byName.has(name)) byName.set(name, registry.selTool(sequence, name));
    }
  }
  return [...byName.values()].sort((a, b) => (a.function.name < b.function.name ? -1 : 1));
}

export interface DatabaseEmitInput {
  db: DatabaseInfo;
  datasetName: string;
  formulations: readonly PipelineFormulation[];
  /** The database's items, in instance index order. */
  items: readonly ItemResult[];
  config: Config;
  outDir: string;
  version: string;
}

export async function emitDatabase(input: DatabaseEmitInput): Promise<EmittedFile[]> {
  const { db, datasetName, outDir } = input;
  const files: EmittedFile[] = [];
  const registry = toolRegistry(db, input.config.pool);
  for (const formulation of input.formulations) {
    const accepted = input.items.flatMap((item) => {
      const result = item.results[formulation];
      return result?.ok ? [{ instance: item.instance, sample: result }] : [];
    });
    const lines = accepted.map(({ instance, sample }) => sampleRecord(datasetName, formulation, instance, sample));
    files.push(await writeArtifact(outDir, `${formulation}/${db.dbId}.jsonl`, jsonlText(lines)));
    const tools =
      formulation === 'slot'
        ? slotToolsOfDatabase(db, registry)
        : selToolsOfSamples(accepted.map((a) => a.sample), registry);
    files.push(await writeArtifact(outDir, `tools/${formulation}/${db.dbId}.json`, jsonText(tools)));
    const openapi = toOpenApi(tools, { title: `${datasetName} ${formulation.toUpperCase()} tools: ${db.dbId}`, version: input.version });
    files.push(await writeArtifact(outDir, `openapi/${formulation}/${db.dbId}.json`, jsonText(openapi)));
  }
  return files;
}
