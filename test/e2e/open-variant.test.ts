import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import type { GoldResult, SlotSequence, ToolCall } from '../../core/model.js';
import { generate } from '../../pipeline/generate.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { executeStage } from '../../pipeline/stages/execute.js';
import { goldStage } from '../../pipeline/stages/gold.js';
import { verifyStage } from '../../pipeline/stages/verify.js';
import { onVariant, variantsOf } from '../../pipeline/variants.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { checkDifferential } from '../../verifiers/differential.js';
import { writeJsonlSource } from '../support/jsonl-source.js';

/**
 * A gold whose LIMIT window is settled on the database but open on a value-perturbed variant.
 * Ten names, each on six consecutive cards, costs falling card by card: each name's costs form
 * a block of their own, so `DISTINCT name … ORDER BY cost DESC LIMIT 1` is n0 whichever of its
 * costs orders a name. `perturbed-1` rotates the name and cost columns by different offsets
 * (not a multiple of six apart, for this table and seed): the name whose cards straddle the
 * rotation's wrap gets the highest cost and some of the lowest, and whether it comes first
 * depends on which of its costs SQLite orders it by, which SQL leaves open.
 */

let dir: string;
let source: string;

const QUERY = 'SELECT DISTINCT name FROM card ORDER BY cost DESC LIMIT 1';
const cards = Array.from({ length: 60 }, (_, i) => `(${i + 1}, 'n${Math.floor(i / 6)}', ${1000 - i})`);

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-open-variant-'));
  source = writeJsonlSource(
    path.join(dir, 'source'),
    'cards',
    `CREATE TABLE card (id INTEGER PRIMARY KEY, name TEXT NOT NULL, cost INT NOT NULL);
     INSERT INTO card VALUES ${cards.join(', ')};`,
    [['top', QUERY]],
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function withStage<T>(run: (ctx: Parameters<typeof goldStage.run>[1], gold: GoldResult) => Promise<T>) {
  const loaded = await loadSource(source);
  const config = parseConfig({ source, out: path.join(dir, 'stages'), progress: 'none' });
  const executor = createDirectExecutor();
  try {
    const ctx = { config, db: loaded.databases[0], executor };
    const gold = await goldStage.run({ instance: loaded.instances[0] }, ctx);
    if (!gold.ok) throw new Error(`${gold.category}: ${gold.message}`);
    return await run(ctx, gold.value);
  } finally {
    await executor.close();
  }
}

test('the variant is marked open, and its arbitrary pick makes the gold neither discriminating nor nondeterministic', async () => {
  await withStage(async (_ctx, gold) => {
    expect(gold.rows).toEqual([['n0']]);
    const perturbed = gold.variants!.find((v) => v.variant === 'perturbed-1')!;
    expect(perturbed.open).toBe(true);
    // SQLite's pick there is not n0: counted as the answer moving, the gold was 'discriminating'.
    expect(perturbed.answers).not.toContainEqual([['n0']]);
    expect(gold.strength).toBeUndefined();
  });
});

test('either pick SQLite may make on the open variant is accepted, and the verdict says nothing was compared', async () => {
  await withStage(async (ctx, gold) => {
    const there = onVariant(ctx, variantsOf(ctx.config.verification)[1]).executor;
    // The name ordered by its highest cost, and by its lowest: the two extremes of that choice.
    const pick = async (aggregate: 'MAX' | 'MIN') =>
      (
        await there.run({
          dbPath: ctx.db.path,
          sql: `SELECT name FROM card GROUP BY name ORDER BY ${aggregate}(cost) DESC LIMIT 1`,
          params: [],
          timeoutMs: 5000,
        })
      ).rows;
    const picks = [await pick('MAX'), await pick('MIN')];
    expect(picks[0]).not.toEqual(picks[1]);
    for (const rows of picks) {
      const verdict = checkDifferential(gold, [
        { variant: 'perturbed-1', outputs: [{ kind: 'table', columns: ['name'], rows }] },
      ]);
      expect(verdict).toMatchObject({ ok: true, category: 'differential:open' });
      expect(verdict.message).toContain('perturbed-1');
    }
  });
});

test('generated samples are accepted; a sequence wrong on the database is still rejected', async () => {
  const out = path.join(dir, 'out');
  const result = await generate({ config: parseConfig({ source, out, progress: 'none' }) });
  const samples = (formulation: string) =>
    readFileSync(path.join(out, formulation, 'cards.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  for (const formulation of ['slot', 'sel', 'rest'] as const) {
    expect(result.stats!.formulations[formulation]!.total).toMatchObject({ input: 1, accepted: 1 });
    expect(samples(formulation)[0].verification).toMatchObject({ differential: { category: 'differential:open' } });
  }
  const [slot] = samples('slot') as { initialization_step: ToolCall[]; output: ToolCall[]; answer_labels: string[] }[];
  const sequence: SlotSequence = {
    initialization: slot.initialization_step,
    calls: slot.output,
    answerLabels: slot.answer_labels,
  };
  await withStage(async (ctx, gold) => {
    const input = { formulation: 'slot' as const, sequence };
    const execution = await executeStage.run(input, ctx);
    if (!execution.ok) throw new Error(execution.message);
    expect(await verifyStage.run({ ...input, execution: execution.value, gold }, ctx)).toMatchObject({ ok: true });
    // Held to another answer on the database itself (the cheapest name instead of the dearest).
    const wrong = { ...gold, rows: [['n9']] };
    expect(await verifyStage.run({ ...input, execution: execution.value, gold: wrong }, ctx)).toMatchObject({
      ok: false,
      category: expect.stringMatching(/^semantic:/),
    });
  });
});
