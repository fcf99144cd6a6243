import { FORMULATIONS, type Formulation } from '../core/model.js';

/**
 * The formulations a run generates, in order. Every one but REST is a tool sequence, run by
 * the SLOT/SEL item flow (runner/flow.ts); REST has its own stages (runner/rest.ts). What
 * each one is made of: formulations.ts.
 */
export type SequenceFormulation = Exclude<Formulation, 'rest'>;

/** Canonical order (slot, sel, rest), whatever order the config lists them in. */
export function orderedFormulations(formulations: readonly Formulation[]): Formulation[] {
  return FORMULATIONS.filter((f) => formulations.includes(f));
}

/** The sequence formulations among these, in canonical order. */
export function sequenceFormulations(formulations: readonly Formulation[]): SequenceFormulation[] {
  return orderedFormulations(formulations).filter((f): f is SequenceFormulation => f !== 'rest');
}
