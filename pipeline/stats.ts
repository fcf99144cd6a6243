import { type Formulation, type Rejection, orderedFormulations } from '../core/model.js';
import type { StageMetrics } from './runner/stage-runner.js';
import type { SqlCounts } from './sql-memo.js';
import type { RestDedupStats } from './runner/rest.js';
import type { UsageSnapshot } from '../generators/llm/usage.js';
import type { ItemResult, ItemSummary } from './samples.js';
import { funnelOf, type StageName } from './graph.js';

/**
 * Run statistics. Everything outside `timing` is a function of the inputs, config and the
 * cached outcomes (deterministic); `timing` holds what varies from run to run (times, cache
 * hits, memory).
 */

export interface Tally {
  input: number;
  accepted: number;
  rejected: number;
  /** `stage:category` → count, keys sorted. */
  rejectedBy: Record<string, number>;
  /** Accepted samples by what agreeing with their gold proves (`verification.strength`), keys sorted. */
  strength: Record<string, number>;
}

export interface StageTally {
  input: number;
  accepted: number;
  rejected: number;
}

export interface FormulationStats {
  total: Tally;
  byDb: Record<string, Tally>;
  /** The funnel: per stage, items that reached it and what became of them. */
  stages: Record<string, StageTally>;
}

export interface RunTiming {
  wallMs: number;
  /** LLM requests, cache hits, retries, tokens and cost of the run (when an LLM is configured). */
  llm?: UsageSnapshot;
  peakRssMb: number;
  stages: Record<string, StageMetrics>;
  /** SQL asked for and run by this process (pipeline/sql-memo.ts): a repeat is a statement run twice. */
  sql?: SqlCounts;
  /** Nothing changed since the run that wrote the outputs on disk: they were kept (output-reuse.ts). */
  outputsReused?: boolean;
  /** The queue run (BullMQ backend) that computed this output; `stages` and `llm` are then its workers'. */
  queueRunId?: string;
}

export interface RunStats {
  dataset: string;
  formulations: Partial<Record<Formulation, FormulationStats>>;
  /** REST endpoints per database before/after dedup and every merge with its reason. */
  rest?: RestDedupStats;
  /** The chain samples (an instance's REST sample starts 0 to several): how many, by length and by transform. */
  chain?: ChainStats;
  timing: RunTiming;
}

export interface ChainStats {
  samples: number;
  byHops: Record<string, number>;
  byTransform: Record<string, number>;
  byDb: Record<string, number>;
  /** `endpoints` (REST's endpoints linked), `nested_sql` (a gold statement's own subquery). */
  byOrigin: Record<string, number>;
}

/** The chain samples of these items, counted. */
export function chainStats(items: readonly ItemResult[], into: ChainStats): ChainStats {
  for (const item of items) {
    const chain = item.results.chain;
    if (!chain?.ok) continue;
    for (const sample of chain.samples) {
      into.samples++;
      into.byHops[sample.hops.length] = (into.byHops[sample.hops.length] ?? 0) + 1;
      into.byDb[item.instance.dbId] = (into.byDb[item.instance.dbId] ?? 0) + 1;
      into.byOrigin[sample.origin] = (into.byOrigin[sample.origin] ?? 0) + 1;
      for (const hop of sample.hops)
        if (hop.link) into.byTransform[hop.link.transform] = (into.byTransform[hop.link.transform] ?? 0) + 1;
    }
  }
  return into;
}

/** Stats without `timing`: a function of the inputs, config and cached outcomes only. */
export type DeterministicStats = Omit<RunStats, 'timing'>;

export class InvariantError extends Error {
  override name = 'InvariantError';
}

/** Ingest rejections are rejections of every formulation: one record each. */
export function expandIngestRejections(
  rejections: readonly Rejection[],
  formulations: readonly Formulation[],
): Rejection[] {
  return rejections.flatMap((r) =>
    r.formulation === 'all' ? formulations.map((f) => ({ ...r, formulation: f })) : [r],
  );
}

/** All rejections in output order: ingest first (source order), then by instance index and formulation. */
export function collectRejections(
  items: readonly ItemSummary[],
  ingestRejections: readonly Rejection[],
  formulations: readonly Formulation[],
): Rejection[] {
  const ordered = orderedFormulations(formulations);
  const rejections = expandIngestRejections(ingestRejections, ordered);
  for (const item of items) {
    for (const f of ordered) {
      const result = item.results[f];
      if (result && !result.ok) {
        rejections.push({
          id: item.instance.id,
          db: item.instance.dbId,
          formulation: f,
          stage: result.stage,
          category: result.category,
          message: result.message,
        });
      }
    }
  }
  return rejections;
}

export function computeStats(args: {
  dataset: string;
  dbIds: readonly string[];
  formulations: readonly Formulation[];
  items: readonly ItemSummary[];
  ingestRejections: readonly Rejection[];
}): DeterministicStats {
  const formulations = orderedFormulations(args.formulations);
  const stats: DeterministicStats = { dataset: args.dataset, formulations: {} };
  for (const f of formulations) {
    const byDb = new Map<string, Tally>(args.dbIds.map((db) => [db, emptyTally()]));
    const tallyOf = (db: string): Tally => {
      let t = byDb.get(db);
      if (!t) byDb.set(db, (t = emptyTally()));
      return t;
    };
    const stages = new Map<string, StageTally>();
    const stageTally = (stage: string): StageTally => {
      let t = stages.get(stage);
      if (!t) stages.set(stage, (t = { input: 0, accepted: 0, rejected: 0 }));
      return t;
    };
    const funnel = funnelOf(f);
    for (const stage of funnel) stageTally(stage);

    for (const r of expandIngestRejections(args.ingestRejections, [f]).filter((r) => r.formulation === f)) {
      count(tallyOf(r.db), false, `${r.stage}:${r.category}`);
      const ingest = stageTally('ingest');
      ingest.input++;
      ingest.rejected++;
    }
    for (const item of args.items) {
      const result = item.results[f];
      const tally = tallyOf(item.instance.dbId);
      if (!result) {
        // Counted as input but neither accepted nor rejected: the invariant check catches it.
        tally.input++;
        continue;
      }
      count(tally, result.ok, result.ok ? '' : `${result.stage}:${result.category}`);
      if (result.ok && result.gold.strength) add(tally.strength, result.gold.strength, 1);
      // The funnel: every stage before the deciding one accepted the item.
      for (const stage of funnel) {
        const t = stageTally(stage);
        if (!result.ok && result.stage === stage) {
          t.input++;
          t.rejected++;
          break;
        }
        if (!result.ok && !funnel.includes(result.stage as StageName)) break;
        t.input++;
        t.accepted++;
      }
    }
    const total = emptyTally();
    for (const t of byDb.values()) {
      total.input += t.input;
      total.accepted += t.accepted;
      total.rejected += t.rejected;
      for (const [k, n] of Object.entries(t.rejectedBy)) add(total.rejectedBy, k, n);
      for (const [k, n] of Object.entries(t.strength)) add(total.strength, k, n);
    }
    stats.formulations[f] = {
      total: sortedTally(total),
      byDb: Object.fromEntries([...byDb.keys()].sort().map((db) => [db, sortedTally(byDb.get(db)!)])),
      stages: Object.fromEntries(stages),
    };
  }
  return stats;
}

/**
 * Nothing is lost: per formulation and per database, every input ended accepted or
 * rejected. `expectedInputs` counts the source items per database independently of the
 * results (instances + ingest rejections).
 */
export function assertNothingLost(stats: DeterministicStats, expectedInputs: ReadonlyMap<string, number>): void {
  const problems: string[] = [];
  for (const [f, fs] of Object.entries(stats.formulations)) {
    for (const [db, t] of Object.entries(fs.byDb)) {
      const expected = expectedInputs.get(db) ?? 0;
      if (t.input !== expected || t.accepted + t.rejected !== t.input) {
        problems.push(
          `${f}/${db}: expected ${expected} inputs, got ${t.input} = ${t.accepted} accepted + ${t.rejected} rejected`,
        );
      }
    }
    for (const [db, expected] of expectedInputs) {
      if (!(db in fs.byDb) && expected > 0) problems.push(`${f}/${db}: ${expected} inputs missing`);
    }
  }
  if (problems.length) throw new InvariantError(`nothing-is-lost invariant violated:\n${problems.join('\n')}`);
}

function emptyTally(): Tally {
  return { input: 0, accepted: 0, rejected: 0, rejectedBy: {}, strength: {} };
}

function add(counts: Record<string, number>, key: string, n: number): void {
  counts[key] = (counts[key] ?? 0) + n;
}

function count(tally: Tally, accepted: boolean, reason: string): void {
  tally.input++;
  if (accepted) tally.accepted++;
  else {
    tally.rejected++;
    add(tally.rejectedBy, reason, 1);
  }
}

function sortedTally(t: Tally): Tally {
  return { ...t, rejectedBy: sortedCounts(t.rejectedBy), strength: sortedCounts(t.strength) };
}

function sortedCounts(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Top rejection reasons, most frequent first (ties by name). */
export function topRejections(tally: Tally, n: number): [string, number][] {
  return Object.entries(tally.rejectedBy)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, n);
}
