import type { PipelineFormulation } from './formulation.js';
import type { GoldResult, Instance, SelSequence, SlotSequence, ToolOutput, Verdict } from './model.js';
import type { StageName } from './stage.js';

/**
 * What the item stages of one instance end in, per formulation: a verified sample or a
 * rejection naming the stage. The runner produces these; stats and emit consume them.
 */

export interface Verification {
  format: Verdict;
  execution: Verdict;
  /** On success its category is the comparison rule that decided. */
  semantic: Verdict;
}

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

export interface ItemResult {
  instance: Instance;
  results: Partial<Record<PipelineFormulation, FormulationResult>>;
}
