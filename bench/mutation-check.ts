import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../config/load.js';
import type { SlotSequence, ToolCall } from '../core/model.js';
import { loadSource } from '../pipeline/sources/index.js';
import { executeStage } from '../pipeline/stages/execute.js';
import { goldStage } from '../pipeline/stages/gold.js';
import { verifyStage } from '../pipeline/stages/verify.js';
import { createSqlPool } from '../runtime/sql/pool.js';
import { MUTATION_KINDS, mutate, type Mutant, type MutationKind } from './mutations.js';

/**
 * The mutation check (issue 11): accepted SLOT samples of a generated output, one mutation
 * each (bench/mutations.ts), run through the execute and verify stages as the pipeline runs
 * them. A mutant is caught by the single-database checks (format, execution, semantic: the
 * baseline) or only by differential verification on the database variants; one that passes
 * everything is a survivor (some are equivalent to the original: a filter that selects
 * every row anyway, …).
 */

export interface MutationReport {
  samples: number;
  byKind: Record<string, number>;
  caughtBySingleDatabase: number;
  caughtByVariants: number;
  /**
   * The same over the samples whose gold is `discriminating` (what `--weak-gold drop`
   * keeps): an insensitive gold cannot tell a mutant that the variants leave equivalent.
   */
  discriminating: { samples: number; caught: number };
  /** Mutants that passed every check: the call dropped or changed (as it was), and its gold's strength. */
  survivors: { id: string; kind: MutationKind; call: ToolCall; strength: string }[];
}

interface PublishedSample {
  sample_id: string;
  initialization_step: ToolCall[];
  output: ToolCall[];
  answer_labels: string[];
  /** As the generating run graded its gold (absent: generated without variants). */
  verification: { strength?: string };
}

export async function mutationCheck(
  sourceDir: string,
  generated: string,
  options: { count?: number; variants?: number; cacheDir?: string } = {},
): Promise<MutationReport> {
  const count = options.count ?? 200;
  const source = await loadSource(sourceDir);
  const instances = new Map(source.instances.map((i) => [i.id, i]));
  const databases = new Map(source.databases.map((db) => [db.dbId, db]));
  const samples = pick(readSamples(path.join(generated, 'slot')), count);
  // The output's cache folder (or the one given): its database variants are reused.
  const config = parseConfig({
    source: sourceDir,
    out: generated,
    progress: 'none',
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    ...(options.variants === undefined ? {} : { verification: { variants: options.variants } }),
  });
  const executor = createSqlPool({ size: config.sqlWorkers });
  const report: MutationReport = {
    samples: 0,
    byKind: {},
    caughtBySingleDatabase: 0,
    caughtByVariants: 0,
    discriminating: { samples: 0, caught: 0 },
    survivors: [],
  };
  try {
    for (const [n, sample] of samples.entries()) {
      const instance = instances.get(sample.sample_id)!;
      const ctx = { config, db: databases.get(instance.dbId)!, executor };
      const original: SlotSequence = {
        initialization: sample.initialization_step,
        calls: sample.output,
        answerLabels: sample.answer_labels,
      };
      const mutant = firstApplicable(original, n);
      if (!mutant) continue;
      const gold = await goldStage.run({ instance }, ctx);
      if (!gold.ok) continue;
      report.samples++;
      report.byKind[mutant.kind] = (report.byKind[mutant.kind] ?? 0) + 1;
      const input = { formulation: 'slot' as const, sequence: mutant.sequence };
      const execution = await executeStage.run(input, ctx);
      if (!execution.ok) throw new Error(`execute rejected a mutant of ${instance.id}: ${execution.message}`);
      const verdict = await verifyStage.run({ ...input, execution: execution.value, gold: gold.value }, ctx);
      const strength = sample.verification.strength ?? 'unknown';
      if (strength === 'discriminating') {
        report.discriminating.samples++;
        if (!verdict.ok) report.discriminating.caught++;
      }
      if (verdict.ok) report.survivors.push({ id: instance.id, kind: mutant.kind, call: mutant.call, strength });
      else if (verdict.category.startsWith('differential:')) report.caughtByVariants++;
      else report.caughtBySingleDatabase++;
    }
  } finally {
    await executor.close();
  }
  return report;
}

/** The mutation kinds in turn, starting with the n-th: the first that applies. */
function firstApplicable(sequence: SlotSequence, n: number): (Mutant & { kind: MutationKind }) | null {
  for (let k = 0; k < MUTATION_KINDS.length; k++) {
    const kind = MUTATION_KINDS[(n + k) % MUTATION_KINDS.length];
    const mutant = mutate(sequence, kind);
    if (mutant) return { kind, ...mutant };
  }
  return null;
}

function readSamples(folder: string): PublishedSample[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.jsonl'))
    .sort()
    .flatMap((file) =>
      readFileSync(path.join(folder, file), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as PublishedSample),
    );
}

/** `count` samples spread evenly over all of them (every database represented). */
function pick<T>(all: readonly T[], count: number): T[] {
  if (all.length <= count) return [...all];
  return Array.from({ length: count }, (_, i) => all[Math.floor((i * all.length) / count)]);
}
