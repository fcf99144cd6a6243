import { FORMULATIONS, type Formulation } from '../core/model.js';

/**
 * The formulations a run generates. SLOT and SEL are tool sequences and share the per-item
 * flow (runner/flow.ts); REST has its own stages (runner/rest.ts).
 */
export type SequenceFormulation = Extract<Formulation, 'slot' | 'sel'>;

/** Canonical order (slot, sel, rest), whatever order the config lists them in. */
export function orderedFormulations(formulations: readonly Formulation[]): Formulation[] {
  return FORMULATIONS.filter((f) => formulations.includes(f));
}

/** The sequence formulations among these, in canonical order. */
export function sequenceFormulations(formulations: readonly Formulation[]): SequenceFormulation[] {
  return orderedFormulations(formulations).filter((f): f is SequenceFormulation => f !== 'rest');
}
