import { rmSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { loadEvalDataset } from '../../eval/dataset.js';
import { openLiveTools, type LiveTools } from '../../eval/live-tools.js';
import { runGold, type SharedOutputs } from '../../export/gold-run.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { createSqlPool } from '../../runtime/sql/pool.js';
import { DEMO_SOURCE, generateDemo } from '../eval/fixtures.js';

/**
 * A gold run's outputs serve every sample whose calls up to there are the same in SLOT's terms
 * (export/gold-run.ts SharedOutputs): a SEL sample shows its SLOT twin's outputs, the very
 * ones it would run, without running anything.
 */

let root: string;
beforeAll(async () => {
  root = await generateDemo();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("a SEL sample shows its SLOT twin's outputs without running a statement, the same it runs alone", async () => {
  const config = parseConfig({ source: DEMO_SOURCE, progress: 'none' });
  const pool = createSqlPool({ size: 1 });
  let statements = 0;
  const executor: SqlExecutor = {
    ...pool,
    run: (request) => {
      statements++;
      return pool.run(request);
    },
  };
  const opened: LiveTools[] = [];
  const environmentOf = async (formulation: 'slot' | 'sel') => {
    const dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation });
    const live = await openLiveTools(dataset, DEMO_SOURCE, config, executor);
    opened.push(live);
    return { items: dataset.items, environment: async () => live.environment };
  };
  try {
    const slot = await environmentOf('slot');
    const sel = await environmentOf('sel');
    // A question whose calls before its answer run for their outputs.
    const selItem = sel.items.find((item) => item.goldCalls.length > 1)!;
    const slotItem = slot.items.find((item) => item.db === selItem.db && item.id === selItem.id)!;
    const needs = { negative: false };

    const alone = await runGold(selItem, sel.environment, needs, 5);
    const shared: SharedOutputs = new Map();
    const twin = await runGold(slotItem, slot.environment, needs, 5, new Map(), shared);
    expect(shared.size).toBeGreaterThan(0);
    statements = 0;
    const reused = await runGold(selItem, sel.environment, needs, 5, new Map(), shared);
    expect(statements).toBe(0);
    expect(reused).toEqual(alone);
    expect(reused.outputs).toEqual(twin.outputs);
  } finally {
    for (const live of opened) await live.close();
    await pool.close();
  }
}, 60_000);
