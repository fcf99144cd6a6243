import type { PipelineFormulation } from './formulation.js';
import { SHARED_STAGES, pathStages } from './runner/flow.js';
import type { StageName } from './stage.js';

/** Per stage: items done (computed, cached or skipped because an earlier stage rejected). */
export interface ProgressEvent {
  stage: StageName;
  done: number;
  total: number;
}

export type ProgressListener = (event: ProgressEvent) => void;

/** Counts stage completions against totals known up front (items × formulations on the path). */
export class ProgressTracker {
  private readonly counts = new Map<StageName, { done: number; total: number }>();

  constructor(
    items: number,
    formulations: readonly PipelineFormulation[],
    private readonly listener?: ProgressListener,
  ) {
    for (const stage of SHARED_STAGES) this.counts.set(stage, { done: 0, total: items });
    for (const f of formulations) {
      for (const stage of pathStages(f)) {
        const entry = this.counts.get(stage) ?? { done: 0, total: 0 };
        entry.total += items;
        this.counts.set(stage, entry);
      }
    }
  }

  stages(): ProgressEvent[] {
    return [...this.counts].map(([stage, c]) => ({ stage, ...c }));
  }

  done(stage: StageName): void {
    const entry = this.counts.get(stage);
    if (!entry) return;
    entry.done++;
    this.listener?.({ stage, ...entry });
  }
}
