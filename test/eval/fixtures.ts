import { cpSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { packageRoot } from '../../core/package-root.js';
import { expect } from '@jest/globals';
import type { Formulation, ToolCall } from '../../core/model.js';
import type { EvalModel, Turn } from '../../eval/models/model.js';
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
export const generateDemo = () => demoDataset('demo', {});

/** The same, generated with the REST and chain formulations: chains of the demo's endpoints (issue 36). */
export const generateDemoChains = () => demoDataset('demo-chain', { formulations: ['rest', 'chain'] });

async function demoDataset(name: string, settings: { formulations?: Formulation[] }): Promise<string> {
  const shared = await sharedFixture(name, async (dir) => {
    await generate({
      config: parseConfig({
        source: DEMO_SOURCE,
        datasetName: 'nl2api-demo',
        ...settings,
        out: path.join(dir, 'dataset'),
        cacheDir: path.join(dir, 'gen-cache'),
        progress: 'none',
      }),
    });
  });
  const out = mkdtempSync(path.join(os.tmpdir(), `nl2api-${name}-`));
  cpSync(path.join(shared, 'dataset'), path.join(out, 'dataset'), { recursive: true });
  return out;
}

/** A model whose reply is worked out from the item's gold calls and the turn (the tests' imperfect models). */
export function scripted(id: string, reply: (gold: ToolCall[], turn: Turn) => string): EvalModel {
  return {
    id,
    family: 'gpt',
    readsPrompt: true,
    respond: async (turn) => ({ content: reply(turn.item.goldCalls, turn), cached: false }),
  };
}

/** One item's attempt by a scripted model: its result line and the model's summary. */
export async function scoreOf(
  root: string,
  item: Omit<Parameters<typeof evalOptions>[1], 'report'>,
  model: EvalModel,
  extra: Record<string, unknown> = {},
) {
  const result = await run(root, {
    ...item,
    models: [model.id],
    extraModels: { [model.id]: model },
    report: `scripted-${model.id}`,
    ...extra,
  });
  const lines = result.lines.filter((l) => l.kind === 'tools');
  expect(lines).toHaveLength(1);
  return { line: lines[0], summary: result.summary.models[0] };
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
