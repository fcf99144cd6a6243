import type { Formulation } from './model.js';

/** The formulations this pipeline generates (REST has its own stages, not wired yet). */
export type PipelineFormulation = Extract<Formulation, 'slot' | 'sel'>;
export const PIPELINE_FORMULATIONS: readonly PipelineFormulation[] = ['slot', 'sel'];

/** Canonical order (slot before sel), whatever order the config lists them in. */
export function orderedFormulations(formulations: readonly PipelineFormulation[]): PipelineFormulation[] {
  return PIPELINE_FORMULATIONS.filter((f) => formulations.includes(f));
}
