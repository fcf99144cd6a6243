import type { Formulation } from '../core/model.js';

/**
 * The formulations a run generates. SLOT and SEL are tool sequences and share the per-item
 * flow (runner/flow.ts); REST has its own stages (runner/rest.ts).
 */
export type PipelineFormulation = Formulation;
export type SequenceFormulation = Extract<Formulation, 'slot' | 'sel'>;
export const PIPELINE_FORMULATIONS: readonly PipelineFormulation[] = ['slot', 'sel', 'rest'];

/** Canonical order (slot, sel, rest), whatever order the config lists them in. */
export function orderedFormulations(formulations: readonly PipelineFormulation[]): PipelineFormulation[] {
  return PIPELINE_FORMULATIONS.filter((f) => formulations.includes(f));
}

/** The sequence formulations among these, in canonical order. */
export function sequenceFormulations(formulations: readonly PipelineFormulation[]): SequenceFormulation[] {
  return orderedFormulations(formulations).filter((f): f is SequenceFormulation => f !== 'rest');
}

/** REST's stages after ingest, in order (a stage a rejection names ends the funnel there). */
export const REST_STAGES = ['gold', 'rest.synthesize', 'rest.dedup', 'execute', 'verify'] as const;
