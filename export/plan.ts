import { callsRest, type ToolSpec } from '../core/model.js';
import type { Outcome } from '../core/outcome.js';
import type { EvalItem } from '../eval/dataset.js';
import { shortlist } from '../eval/tool-view.js';
import { loadCorpus, type CorpusInput, type CorpusItem } from './corpus.js';
import type { GoldRun } from './gold-run.js';
import { ownTools } from './live-api-bench.js';
import { dedupeAcrossSources, normalizedText, weighted, type Duplicate } from './mixture.js';
import { hasNegative, withoutTools } from './negatives.js';
import type { ExportSample } from './sample.js';
import type { ExportSettings } from './settings.js';
import { splitByDatabase, splitByQuestion, type SplitName } from './splits.js';

/**
 * What an export is made of before any tool runs, a function of its inputs and settings only
 * (so that a second process makes the very same): the corpus, the samples kept after
 * cross-source deduplication, each question's split and which samples get a negative. Its
 * examples then follow from the gold runs.
 */
export interface ExportPlan {
  corpus: Awaited<ReturnType<typeof loadCorpus>>;
  kept: CorpusItem[];
  duplicates: Duplicate[];
  /** Each split key's split. */
  assignment: Map<string, SplitName>;
  /** The units (questions of a source) that get a negative. */
  negativeUnits: Set<string>;
}

export async function planExport(from: readonly CorpusInput[], settings: ExportSettings): Promise<ExportPlan> {
  const corpus = await loadCorpus(from, settings.formulations);
  const { kept, duplicates } = dedupeAcrossSources(corpus.items);
  // A chain has no negative: its hops' questions have theirs (a chain's tools are its database's endpoints, as theirs).
  const negativeUnits = new Set(
    kept
      .filter((e) => e.item.formulation !== 'chain' && hasNegative(e.unit, settings.negatives, settings.seed))
      .map((e) => e.unit),
  );
  return { corpus, kept, duplicates, assignment: assignSplits(kept, settings), negativeUnits };
}

/**
 * What is split: a question of a database, whichever source and formulation gave it (so a
 * question's SLOT, SEL and REST samples, its copies and the same question from another
 * source all share a split); a chain goes with its first hop's question, whose values its
 * question asks for. A database is its id in every source.
 */
export const splitKeyOf = (entry: CorpusItem) => `${entry.item.db}\u0000${normalizedText(splitQuestion(entry.item))}`;

function splitQuestion(item: EvalItem): string {
  const firstHop = (item.published as { first_hop?: { question?: unknown } }).first_hop;
  return item.formulation === 'chain' && typeof firstHop?.question === 'string' ? firstHop.question : item.question;
}

/** Each split key's split. */
function assignSplits(kept: readonly CorpusItem[], settings: ExportSettings): Map<string, SplitName> {
  const keys = [...new Map(kept.map((e) => [splitKeyOf(e), e]))].map(([key, e]) => ({
    key,
    db: e.item.db,
    difficulty: e.item.difficulty,
  }));
  if (settings.split === 'none') return new Map(keys.map((k) => [k.key, 'train']));
  return settings.split === 'by-database'
    ? splitByDatabase(keys, settings.shares, settings.seed)
    : splitByQuestion(keys, settings.shares, settings.seed);
}

/** The examples, in source order: each sample's weighted copies, then its negative (if it gets one and can have one). */
export function exportSamples(
  { kept, assignment, negativeUnits }: ExportPlan,
  runs: ReadonlyMap<string, Outcome<GoldRun>>,
  settings: ExportSettings,
): ExportSample[] {
  const samples: ExportSample[] = [];
  const offer = (item: EvalItem, tools: readonly ToolSpec[], gold: EvalItem['goldCalls'], key: string) =>
    callsRest(item.formulation) && settings.restTools > 0
      ? shortlist(tools, gold, key, settings.restTools)
      : [...tools];
  for (const entry of weighted(kept, settings.seed)) {
    const run = runs.get(entry.key);
    if (!run?.ok) continue;
    const { item } = entry;
    const common = {
      unit: entry.unit,
      source: entry.source,
      item,
      split: assignment.get(splitKeyOf(entry))!,
      startKeys: run.value.startKeys,
      ...(run.value.pandas ? { pandas: run.value.pandas } : {}),
    };
    samples.push(
      withOwnTools({
        ...common,
        key: entry.copy ? `${entry.key}#${entry.copy}` : entry.key,
        copy: entry.copy,
        negative: false,
        tools: offer(item, item.tools, item.goldCalls, entry.key),
        outputs: run.value.outputs,
      }),
    );
    const negative = run.value.negative;
    if (entry.copy === 0 && negativeUnits.has(entry.unit) && negative?.ok) {
      const key = `${entry.key}!negative`;
      samples.push(
        withOwnTools({
          ...common,
          key,
          copy: 0,
          negative: true,
          tools: offer(item, withoutTools(item.tools, new Set(negative.removed)), [], key),
          outputs: [],
        }),
      );
    }
  }
  return samples;
}

/** SLOT and SEL examples offer their tools with the keys of their own tables only (live-api-bench.ts ownTools). */
function withOwnTools(sample: ExportSample): ExportSample {
  return { ...sample, tools: ownTools(sample) };
}
