import { cpSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { packageRoot } from '../../core/package-root.js';
import type { Formulation } from '../../core/model.js';
import { EVAL_DEFAULTS } from '../../config/schema.js';
import { runEval, type EvalOptions } from '../../eval/run.js';
import { generate } from '../../pipeline/generate.js';
import { sharedFixture } from '../support/shared-fixture.js';

/** The embedded demo's generated dataset, and eval runs over it. */

export const DEMO_SOURCE = path.join(packageRoot(), 'seeds', 'demo');

/**
 * A temporary folder of the test file's own with the demo's dataset in `dataset/`: a copy of
 * the one the run generates once for every file that asks (shared-fixture.ts).
 */
export async function generateDemo(): Promise<string> {
  const shared = await sharedFixture('demo', async (dir) => {
    await generate({
      config: parseConfig({
        source: DEMO_SOURCE,
        datasetName: 'nl2api-demo',
        out: path.join(dir, 'dataset'),
        cacheDir: path.join(dir, 'gen-cache'),
        progress: 'none',
      }),
    });
  });
  const out = mkdtempSync(path.join(os.tmpdir(), 'nl2api-eval-'));
  cpSync(path.join(shared, 'dataset'), path.join(out, 'dataset'), { recursive: true });
  return out;
}

/** The same, generated with the REST and chain formulations: chains of the demo's endpoints (issue 36). */
export async function generateDemoChains(): Promise<string> {
  const shared = await sharedFixture('demo-chain', async (dir) => {
    await generate({
      config: parseConfig({
        source: DEMO_SOURCE,
        datasetName: 'nl2api-demo',
        formulations: ['rest', 'chain'],
        out: path.join(dir, 'dataset'),
        cacheDir: path.join(dir, 'gen-cache'),
        progress: 'none',
      }),
    });
  });
  const out = mkdtempSync(path.join(os.tmpdir(), 'nl2api-chain-'));
  cpSync(path.join(shared, 'dataset'), path.join(out, 'dataset'), { recursive: true });
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
