import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EVAL_DEFAULTS, type Config } from '../config/schema.js';
import { orderedFormulations } from '../core/model.js';
import { runEval } from './run.js';
import type { EvalSummary, ModelSummary } from './summary.js';

/**
 * The evaluation a config names (`evaluate`) on a generated output: every named model on each
 * formulation, into `<out>/eval/<formulation>/`, with results and replies cached beside the
 * run's own cache (`<cacheDir>/eval`), so that a nightly regeneration asks a model only about
 * what changed. Compared with the previous version's scores, it is what the version's
 * diff.json reports under `evaluation`.
 */

export interface MetricChange {
  previous: number | null;
  current: number;
  delta: number | null;
}

export interface ModelChange {
  attempts: number;
  completion: MetricChange;
  intentF1: MetricChange;
  slotF1: MetricChange;
}

/** Per formulation, per model. */
export type EvaluationDiff = Record<string, Record<string, ModelChange>>;

export const EVAL_DIR = 'eval';

export async function evaluateOutput(run: {
  config: Config;
  out: string;
  previous: string | null;
  cacheDir: string;
  log?: (line: string) => void;
}): Promise<EvaluationDiff> {
  const evaluate = run.config.evaluate;
  if (!evaluate) return {};
  const diff: EvaluationDiff = {};
  for (const formulation of orderedFormulations(evaluate.formulations ?? run.config.formulations)) {
    if (!existsSync(path.join(run.out, formulation))) continue;
    const report = path.join(run.out, EVAL_DIR, formulation);
    const result = await runEval({
      config: { ...run.config, progress: 'none' },
      dataset: run.out,
      formulation,
      models: evaluate.models,
      mode: evaluate.mode,
      tools: evaluate.tools,
      shots: evaluate.shots,
      repeats: evaluate.repeats,
      budget: evaluate.budget,
      limit: evaluate.limit,
      obfuscate: EVAL_DEFAULTS.obfuscate,
      shortlist: EVAL_DEFAULTS.shortlist,
      sqlBaseline: evaluate.sqlBaseline,
      report,
      cacheDir: path.join(run.cacheDir, EVAL_DIR),
    });
    const before = run.previous ? previousSummary(path.join(run.previous, EVAL_DIR, formulation)) : undefined;
    diff[formulation] = Object.fromEntries(
      result.summary.models.map((model) => [
        model.model,
        changeOf(
          model,
          before?.models.find((m) => m.model === model.model),
        ),
      ]),
    );
    run.log?.(
      `evaluated ${formulation}: ${result.summary.models.map((m) => `${m.model} ${(100 * m.completion.mean).toFixed(1)}%`).join(', ')}`,
    );
  }
  return diff;
}

function changeOf(current: ModelSummary, previous: ModelSummary | undefined): ModelChange {
  const metric = (now: number, then: number | undefined): MetricChange => ({
    previous: then ?? null,
    current: now,
    delta: then === undefined ? null : now - then,
  });
  return {
    attempts: current.attempts,
    completion: metric(current.completion.mean, previous?.completion.mean),
    intentF1: metric(current.intentF1.mean, previous?.intentF1.mean),
    slotF1: metric(current.slotF1.mean, previous?.slotF1.mean),
  };
}

function previousSummary(dir: string): EvalSummary | undefined {
  const file = path.join(dir, 'summary.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as EvalSummary) : undefined;
}
