import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { packageRoot } from '../../core/package-root.js';
import type { Formulation } from '../../core/model.js';
import { EVAL_DEFAULTS } from '../../config/schema.js';
import { runEval, type EvalOptions } from '../../eval/run.js';
import { generate } from '../../pipeline/generate.js';

/** The embedded demo, generated once per test file into a temporary folder, and eval runs over it. */

export const DEMO_SOURCE = path.join(packageRoot(), 'seeds', 'demo');

export async function generateDemo(): Promise<string> {
  const out = mkdtempSync(path.join(os.tmpdir(), 'nl2api-eval-'));
  await generate({
    config: parseConfig({
      source: DEMO_SOURCE,
      datasetName: 'nl2api-demo',
      out: path.join(out, 'dataset'),
      cacheDir: path.join(out, 'gen-cache'),
      progress: 'none',
    }),
  });
  return out;
}

export function evalOptions(
  root: string,
  overrides: Partial<EvalOptions> & { formulation?: Formulation; dbIds?: string[]; report: string },
): EvalOptions {
  const { dbIds, ...rest } = overrides;
  return {
    // The scripted servers answer at once: no reason to pace requests at a real provider's rate.
    config: parseConfig({
      source: DEMO_SOURCE,
      progress: 'none',
      llm: { requestsPerMinute: 1_000_000 },
      ...(dbIds ? { dbIds } : {}),
    }),
    ...EVAL_DEFAULTS,
    dataset: path.join(root, 'dataset'),
    formulation: 'slot',
    models: ['oracle'],
    ...rest,
    report: path.join(root, rest.report),
  };
}

export const run = (root: string, overrides: Parameters<typeof evalOptions>[1]) =>
  runEval(evalOptions(root, overrides));
