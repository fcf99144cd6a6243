import { kindOf, PIPELINE_GRAPH, pathStages, SHARED_STAGES } from './graph.js';
import type { SequenceFormulation } from '../core/model.js';

/**
 * Per stage: items done (computed, cached or skipped because an earlier stage rejected).
 * `stage` is a label: a stage name, or `rest.<stage>` for REST's own execute and verify.
 */
export interface ProgressEvent {
  stage: string;
  done: number;
  total: number;
}

export type ProgressListener = (event: ProgressEvent) => void;

/** Counts stage completions against totals known up front. */
export class ProgressTracker {
  private readonly counts = new Map<string, { done: number; total: number }>();

  constructor(
    totals: Iterable<[stage: string, total: number]>,
    private readonly listener?: ProgressListener,
  ) {
    for (const [stage, total] of totals)
      this.counts.set(stage, { done: 0, total: (this.counts.get(stage)?.total ?? 0) + total });
  }

  /** The SLOT/SEL flow: the shared prefix once per item, each formulation's path once per item. */
  static forSequences(
    items: number,
    formulations: readonly SequenceFormulation[],
    listener?: ProgressListener,
  ): ProgressTracker {
    const totals: [string, number][] = formulations.length ? SHARED_STAGES.map((s) => [s, items]) : [];
    for (const f of formulations) for (const stage of pathStages(f)) totals.push([stage, items]);
    return new ProgressTracker(totals, listener);
  }

  /**
   * REST's stages after gold, per instance or (barriers) per database. Their labels carry
   * the `rest.` prefix (`rest.execute`): REST's execute and verify are not the sequences'.
   */
  static forRest(items: number, databases: number, listener?: ProgressListener): ProgressTracker {
    return new ProgressTracker(
      pathStages('rest').map((stage) => [restLabel(stage), kindOf(stage) === 'barrier' ? databases : items]),
      listener,
    );
  }

  stages(): ProgressEvent[] {
    return [...this.counts].map(([stage, c]) => ({ stage, ...c }));
  }

  done(stage: string, count = 1): void {
    const entry = this.counts.get(stage);
    if (!entry) return;
    entry.done += count;
    this.listener?.({ stage, ...entry });
  }
}

/**
 * A REST stage's label in progress and metrics: REST's path stages (execute, verify) are
 * not the sequences' and get the `rest.` prefix; the others are named as they are.
 */
export const restLabel = (stage: string): string =>
  PIPELINE_GRAPH.some((s) => s.name === stage && s.kind === 'path') ? `rest.${stage}` : stage;
