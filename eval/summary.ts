import { groupBy } from '../core/group.js';
import { canonicalJson } from '../core/hash.js';
import type { AttemptRecord } from './attempt.js';
import { BFCL_CATEGORIES, isCall } from './metrics/bfcl.js';
import { CHAIN_ERRORS } from './metrics/chain.js';
import { bootstrapInterval } from './metrics/bootstrap.js';
import { reactStats, type ReactStats } from './metrics/react.js';
import { electionStability } from './metrics/stability.js';

/**
 * The summary of an evaluation (summary.json), a pure function of its results: per model the
 * headline metrics with bootstrap 95% intervals, the error categories, ReAct loop statistics,
 * election stability over repeats, and the breakdowns by database, difficulty and SQL
 * construct. Counts add up: every attempt is scored or failed (a fault of the run: a provider
 * that never answered, a lost SQL worker). A failed attempt is listed, counts as not completed
 * in the headline completion (`completionScored` leaves it out) and enters no F1.
 */

/** One line of results.jsonl. */
export interface ResultLine {
  model: string;
  item: string;
  id: string;
  db: string;
  formulation: string;
  difficulty: string | null;
  constructs: string[];
  repeat: number;
  /** `sql`: an attempt of the SQL baseline (`--sql-baseline`), summarized apart. */
  kind: 'tools' | 'sql';
  question: string;
  evidence: string;
  goldCalls: unknown[];
  /** The attempt, or why there is none (a fault of the run, not scored). */
  attempt: AttemptRecord | null;
  failure?: { category: string; message: string };
}

export interface Interval {
  mean: number;
  low: number;
  high: number;
}

/** One bar of a breakdown: its attempts (a failed one counts as not completed, and in no F1), each measure with its 95% interval. */
export interface Breakdown {
  n: number;
  scored: number;
  completion: Interval;
  intentF1: Interval;
  slotF1: Interval;
}

export interface ModelSummary {
  model: string;
  /** The run's name for this model (`--name`; default model, mode and tools): tells rows apart on a merged page. */
  name: string;
  attempts: number;
  scored: number;
  /** Attempts with no result: a provider that never answered after its retries, a fault of the run. */
  failed: number;
  /** Over every attempt: a failed one is not completed. */
  completion: Interval;
  /** Over the scored attempts only (completion as if the failed ones had not been asked). */
  completionScored: Interval;
  intentF1: Interval;
  /** Items with no intent matched score slot F1 0: a model is penalized for naming no gold tool. */
  slotF1: Interval;
  /**
   * The paper's reading ("not penalized for missing ground-truth intents"): slot F1 over the
   * items with at least one matched intent only (`n` of them).
   */
  slotF1Matched: Interval & { n: number };
  intentPrecision: number;
  intentRecall: number;
  slotPrecision: number;
  slotRecall: number;
  fullSequenceMatch: number;
  partialSequenceMatch: number;
  /** BFCL categories (and `none`), each counted once per scored attempt. */
  errors: Record<string, number>;
  /** How the answers were judged (`scalar`, `semantic:value_mismatch`, `execution:sql_error`, …). */
  answers: Record<string, number>;
  react?: ReactStats;
  /** With repeats: election stability of the calls (CallNavi). */
  stability?: number;
  /** With `--sql-baseline`: the same model writing SQL (Live API-Bench B.3). */
  sqlBaseline?: { attempts: number; failed: number; completion: Interval };
  byDatabase: Record<string, Breakdown>;
  byDifficulty: Record<string, Breakdown>;
  byConstruct: Record<string, Breakdown>;
  /** Chain runs: hop by hop (metrics/chain.ts). */
  chain?: ChainSummary;
}

export interface ChainSummary {
  /** Per hop position (1st, 2nd, 3rd): the share of the scored attempts with that hop that made it right. */
  hopAccuracy: number[];
  /** Per hop position: the share whose endpoint was called in its place (intent), the mean share of its arguments right (slot). */
  hopIntent: number[];
  hopSlot: number[];
  /** The first wrong hop's kind (`none`: every hop right), once per scored attempt. */
  errors: Record<string, number>;
  /** The breakdown by the chain's number of hops. */
  byHops: Record<string, Breakdown>;
}

/** `--predictions`: what the agent's file held, against the items evaluated. */
export interface PredictionsReport {
  path: string;
  format: string;
  /** Items the file gave calls for. */
  read: number;
  /** Items evaluated with no prediction: scored as not completed. */
  missing: string[];
  /** Ids the file names that are not among the items evaluated. */
  unknown: string[];
  duplicates: string[];
  /** Records that could not be read, with why. */
  invalid: string[];
}

export type SummaryHeader = Pick<EvalSummary, 'name' | 'predictions' | 'dataset' | 'formulation' | 'settings'>;

export interface EvalSummary {
  /** `--name`, when given. */
  name?: string;
  predictions?: PredictionsReport;
  dataset: string;
  formulation: string;
  settings: Record<string, unknown>;
  models: ModelSummary[];
}

export function summarize(lines: readonly ResultLine[], header: SummaryHeader): EvalSummary {
  const models = [...new Set(lines.map((l) => l.model))];
  return {
    ...header,
    models: models.map((model) =>
      summarizeModel(
        model,
        runName(header, model, models.length),
        lines.filter((l) => l.model === model),
      ),
    ),
  };
}

/** `--name` (with the model when the run has several), else the model, mode and tools. */
function runName(header: Pick<EvalSummary, 'name' | 'settings'>, model: string, models: number): string {
  if (header.name) return models > 1 ? `${header.name}: ${model}` : header.name;
  const { mode, tools } = header.settings;
  return [model, mode, tools].filter((x) => typeof x === 'string').join(' · ');
}

function summarizeModel(model: string, name: string, all: readonly ResultLine[]): ModelSummary {
  const lines = all.filter((l) => l.kind !== 'sql');
  const sql = all.filter((l) => l.kind === 'sql');
  const scored = lines.filter((l): l is ResultLine & { attempt: AttemptRecord } => l.attempt !== null);
  const s = scored.map((l) => l.attempt.scores);
  const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
  const chain = lines.some((l) => l.formulation === 'chain');
  const categories = [...BFCL_CATEGORIES, ...(chain ? ['bridge_error'] : []), 'none'];
  const errors: Record<string, number> = Object.fromEntries(categories.map((c) => [c, 0]));
  for (const x of s) errors[x.error ?? 'none']++;
  const answers: Record<string, number> = {};
  for (const x of s) answers[x.answer.category] = (answers[x.answer.category] ?? 0) + 1;
  const matched = s.filter((x) => x.matchedIntents > 0);
  const summary: ModelSummary = {
    model,
    name,
    attempts: lines.length,
    scored: scored.length,
    failed: lines.length - scored.length,
    completion: bootstrapInterval(lines.map((l) => (l.attempt?.scores.completed ? 1 : 0))),
    completionScored: bootstrapInterval(s.map((x) => (x.completed ? 1 : 0))),
    intentF1: bootstrapInterval(s.map((x) => x.intent.f1)),
    slotF1: bootstrapInterval(s.map((x) => x.slot.f1)),
    slotF1Matched: { ...bootstrapInterval(matched.map((x) => x.slot.f1)), n: matched.length },
    intentPrecision: mean(s.map((x) => x.intent.precision)),
    intentRecall: mean(s.map((x) => x.intent.recall)),
    slotPrecision: mean(s.map((x) => x.slot.precision)),
    slotRecall: mean(s.map((x) => x.slot.recall)),
    fullSequenceMatch: mean(s.map((x) => (x.fullSequenceMatch ? 1 : 0))),
    partialSequenceMatch: mean(s.map((x) => x.partialSequenceMatch)),
    errors,
    answers: sortedRecord(answers),
    byDatabase: breakdown(lines, (l) => [l.db]),
    byDifficulty: breakdown(lines, (l) => [l.difficulty ?? 'unknown']),
    byConstruct: breakdown(lines, (l) => (l.constructs.length ? l.constructs : ['plain'])),
  };
  if (chain) summary.chain = chainSummary(lines, s);
  const react = scored.filter((l) => l.attempt.react);
  if (react.length > 0) {
    summary.react = reactStats(
      react.map((l) => ({
        ...l.attempt.react!,
        completed: l.attempt.scores.completed,
        calls: (l.attempt.parsed ?? []).filter(isCall),
      })),
    );
  }
  if (sql.length > 0) {
    const scoredSql = sql.filter((l) => l.attempt !== null);
    summary.sqlBaseline = {
      attempts: sql.length,
      failed: sql.length - scoredSql.length,
      completion: bootstrapInterval(scoredSql.map((l) => (l.attempt!.scores.completed ? 1 : 0))),
    };
  }
  // Each item's answers, written out only when some item has more than one (with --repeats).
  const byItem = [...groupBy(scored, (l) => l.item).values()];
  if (byItem.some((attempts) => attempts.length > 1))
    summary.stability = electionStability(
      byItem.map((attempts) => attempts.map((l) => canonicalJson(l.attempt.parsed))),
    );
  return summary;
}

function chainSummary(lines: readonly ResultLine[], scores: readonly AttemptRecord['scores'][]): ChainSummary {
  const hops = scores.flatMap((x) => (x.chain ? [x.chain] : []));
  const longest = Math.max(0, ...hops.map((h) => h.hops.length));
  const errors: Record<string, number> = Object.fromEntries([...CHAIN_ERRORS, 'none'].map((c) => [c, 0]));
  for (const h of hops) errors[h.error?.kind ?? 'none']++;
  const perPosition = (value: (h: (typeof hops)[number], k: number) => number) =>
    Array.from({ length: longest }, (_, k) => {
      const at = hops.filter((h) => h.hops.length > k);
      return at.reduce((sum, h) => sum + value(h, k), 0) / at.length;
    });
  return {
    hopAccuracy: perPosition((h, k) => (h.hops[k] ? 1 : 0)),
    hopIntent: perPosition((h, k) => (h.perHop[k].intent ? 1 : 0)),
    hopSlot: perPosition((h, k) => h.perHop[k].slot),
    errors,
    byHops: breakdown(lines, (l) => [`${l.goldCalls.length} hops`]),
  };
}

function breakdown(lines: readonly ResultLine[], groupsOf: (line: ResultLine) => string[]): Record<string, Breakdown> {
  const groups = groupBy(
    lines.flatMap((line) => groupsOf(line).map((group) => ({ group, scores: line.attempt?.scores }))),
    (entry) => entry.group,
  );
  return sortedRecord(
    Object.fromEntries(
      [...groups].map(([group, entries]) => {
        const scores = entries.flatMap((entry) => (entry.scores ? [entry.scores] : []));
        const breakdown: Breakdown = {
          n: entries.length,
          scored: scores.length,
          completion: bootstrapInterval(entries.map((entry) => (entry.scores?.completed ? 1 : 0))),
          intentF1: bootstrapInterval(scores.map((x) => x.intent.f1)),
          slotF1: bootstrapInterval(scores.map((x) => x.slot.f1)),
        };
        return [group, breakdown];
      }),
    ),
  );
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
