import type { ModelPrice } from './config.js';

/** Counters of one model (or of all models, in `total`). */
export interface UsageTotals {
  /** Requests sent to the provider (retries included). */
  requests: number;
  /** Calls answered from the cache (no request, no tokens, no cost). */
  cacheHits: number;
  retries: number;
  /** Calls that ended in a failure after their last attempt. */
  failures: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface UsageSnapshot {
  total: UsageTotals;
  byModel: Record<string, UsageTotals>;
  /** Models that consumed tokens but have no price in the config (their cost counts as 0). */
  unpricedModels: string[];
}

export const zeroUsage = (): UsageTotals => ({
  requests: 0,
  cacheHits: 0,
  retries: 0,
  failures: 0,
  inputTokens: 0,
  outputTokens: 0,
  costUsd: 0,
});

/**
 * Token usage and cost of every LLM call, for the run's stats. One meter may be shared by
 * several clients (synthesis agent, judge) so the stats show the whole run.
 */
export class UsageMeter {
  private readonly models = new Map<string, UsageTotals>();

  constructor(private readonly prices: Readonly<Record<string, ModelPrice>> = {}) {}

  count(model: string, counter: 'requests' | 'cacheHits' | 'retries' | 'failures'): void {
    this.of(model)[counter] += 1;
  }

  /** Counters measured elsewhere (a queue worker's), added to this meter's. */
  add(model: string, totals: UsageTotals): void {
    const mine = this.of(model);
    for (const key of Object.keys(mine) as (keyof UsageTotals)[]) mine[key] += totals[key];
  }

  addTokens(model: string, inputTokens: number, outputTokens: number): void {
    const totals = this.of(model);
    totals.inputTokens += inputTokens;
    totals.outputTokens += outputTokens;
    const price = this.prices[model];
    if (price) totals.costUsd += (inputTokens * price.inputPerMTok + outputTokens * price.outputPerMTok) / 1e6;
  }

  snapshot(): UsageSnapshot {
    const byModel: Record<string, UsageTotals> = {};
    for (const name of [...this.models.keys()].sort()) byModel[name] = { ...this.models.get(name)! };
    const total = sumUsage(byModel);
    const unpricedModels = Object.keys(byModel).filter(
      (m) => !this.prices[m] && byModel[m].inputTokens + byModel[m].outputTokens > 0,
    );
    return { total, byModel, unpricedModels };
  }

  private of(model: string): UsageTotals {
    let totals = this.models.get(model);
    if (!totals) this.models.set(model, (totals = zeroUsage()));
    return totals;
  }
}

/** The totals over every model. */
export function sumUsage(byModel: Readonly<Record<string, UsageTotals>>): UsageTotals {
  const total = zeroUsage();
  for (const totals of Object.values(byModel))
    for (const key of Object.keys(total) as (keyof UsageTotals)[]) total[key] += totals[key];
  return total;
}

/**
 * The usage since it was last reported, by model; `reported` is updated to `byModel` (a queue
 * worker adds each job's share to its run's counters).
 */
export function unreportedUsage(
  byModel: Readonly<Record<string, UsageTotals>>,
  reported: Record<string, UsageTotals>,
): Record<string, UsageTotals> {
  const delta: Record<string, UsageTotals> = {};
  for (const [model, totals] of Object.entries(byModel)) {
    const before = reported[model];
    delta[model] = Object.fromEntries(
      Object.entries(totals).map(([k, v]) => [k, v - (before?.[k as keyof UsageTotals] ?? 0)]),
    ) as unknown as UsageTotals;
    reported[model] = { ...totals };
  }
  return delta;
}
