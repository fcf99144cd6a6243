import type { SynthesizedEndpoint } from '../runtime/rest/spec.js';
import type { FailedAttempt } from '../generators/rest/synthesis.js';
import type { ChainSample } from './chain/sample.js';
import type {
  Formulation,
  GoldResult,
  Instance,
  SelSequence,
  SlotSequence,
  ToolOutput,
  SequenceFormulation,
} from '../core/model.js';
import { LruMap } from '../core/lru.js';
import type { Verification } from '../verifiers/checks.js';
import type { StageName } from './graph.js';

/**
 * What the item stages of one instance end in, per formulation: a verified sample or a
 * rejection naming the stage. The runner produces these; stats and emit consume them.
 */

export interface AcceptedSample {
  ok: true;
  sequence: SlotSequence | SelSequence;
  /** The answer outputs (one per answer label). */
  outputs: ToolOutput[];
  gold: GoldResult;
  verification: Verification;
}

export interface RejectedSample {
  ok: false;
  /** `runner`: a fault of the flow itself, outside any stage. */
  stage: StageName | 'runner';
  category: string;
  message: string;
}

export type FormulationResult = AcceptedSample | RejectedSample;

/** A verified REST sample: the instance's call of its (canonical) endpoint and the response. */
export interface AcceptedRestSample {
  ok: true;
  /** The endpoint after dedup, as served. */
  endpoint: SynthesizedEndpoint;
  /** The response body the live server returned (`{columns, rows}`). */
  response: unknown;
  gold: GoldResult;
  verification: Verification;
  /** Who proposed the endpoint (`template`, `llm:<provider>/<model>`) and the attempts it took. */
  synthesizer: string;
  attempts: FailedAttempt[];
}

export type RestResult = AcceptedRestSample | RejectedSample;

/** The chains whose first hop is an instance's verified REST sample (generators/chain). */
export interface AcceptedChains {
  ok: true;
  samples: ChainSample[];
}

export type ChainResult = AcceptedChains | RejectedSample;

export interface ItemResult {
  instance: Instance;
  results: Partial<Record<SequenceFormulation, FormulationResult>> & { rest?: RestResult; chain?: ChainResult };
}

/**
 * What a run keeps of an item once its database is written: what stats, the rejections file
 * and the manifest read. Rows, sequences, responses and the question's text are let go with
 * the database: a run keeps one of these per question of the corpus, so it is kept small.
 */
export interface ItemSummary {
  instance: Pick<Instance, 'id' | 'dbId' | 'index'>;
  results: Partial<Record<Formulation, ResultSummary>>;
}

export type ResultSummary = RejectedSample | AcceptedSummary;

type AcceptedSummary = Readonly<{ ok: true; gold: Readonly<Pick<GoldResult, 'strength' | 'referenceTime'>> }>;

/**
 * Accepted summaries are few distinct values (a handful of strengths, the run's reference
 * times): shared, not one per item; bounded, as a process may run many runs.
 */
const acceptedSummaries = new LruMap<string, AcceptedSummary>(64);

function acceptedSummary({ strength, referenceTime }: Partial<GoldResult>): AcceptedSummary {
  const key = JSON.stringify([strength ?? null, referenceTime ?? null]);
  return acceptedSummaries.getOrSet(key, () =>
    Object.freeze({ ok: true, gold: Object.freeze({ strength, referenceTime }) }),
  );
}

export function summarize(item: ItemResult): ItemSummary {
  const results: ItemSummary['results'] = {};
  for (const [formulation, result] of Object.entries(item.results) as [
    Formulation,
    FormulationResult | RestResult | ChainResult,
  ][])
    // A chain has no gold of its own: its composed statement's answer is in each sample.
    results[formulation] = result.ok ? acceptedSummary('gold' in result ? result.gold : {}) : result;
  const { id, dbId, index } = item.instance;
  return { instance: { id, dbId, index }, results };
}
