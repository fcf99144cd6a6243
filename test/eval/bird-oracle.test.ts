import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { EVAL_DEFAULTS } from '../../config/schema.js';
import { runEval } from '../../eval/run.js';
import { generate } from '../../pipeline/generate.js';
import { BIRD_DIR } from '../sql/fixtures.js';

/**
 * The harness's consistency check on real data: on every formulation of BIRD dev, the oracle
 * (each item answered with its gold calls, read back through the reply parser, run on the
 * live tools and judged by the comparison rules) completes every item with intent and slot
 * F1 1.0 and no error. Every fourth question of every database: the whole of BIRD dev took
 * a minute of the suite's CPU; `npm run bench` runs the oracle on all of it and prints the
 * same figures.
 */

const EVERY = 4;

/** A BIRD folder over BIRD dev's databases with every `EVERY`th question. */
function birdSubset(dir: string): string {
  const source = path.join(dir, 'source');
  mkdirSync(source);
  const questions = JSON.parse(readFileSync(path.join(BIRD_DIR, 'dev.json'), 'utf8')) as unknown[];
  writeFileSync(path.join(source, 'dev.json'), JSON.stringify(questions.filter((_, i) => i % EVERY === 0)));
  copyFileSync(path.join(BIRD_DIR, 'dev_tables.json'), path.join(source, 'dev_tables.json'));
  symlinkSync(path.join(BIRD_DIR, 'dev_databases'), path.join(source, 'dev_databases'));
  return source;
}

(existsSync(BIRD_DIR) ? describe : describe.skip)('the oracle on BIRD dev (NL2API_BIRD_DIR)', () => {
  let root: string;
  let source: string;
  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'nl2api-eval-bird-'));
    source = birdSubset(root);
    await generate({
      config: parseConfig({
        source,
        out: path.join(root, 'dataset'),
        cacheDir: path.join(root, 'cache'),
        progress: 'none',
      }),
    });
  }, 600_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  for (const formulation of ['slot', 'sel', 'rest'] as const) {
    test(`${formulation}: completion 1.0, intent and slot F1 1.0, no error`, async () => {
      const run = await runEval({
        config: parseConfig({ source, progress: 'none' }),
        dataset: path.join(root, 'dataset'),
        ...EVAL_DEFAULTS,
        formulation,
        models: ['oracle'],
        shots: 0,
        report: path.join(root, `report-${formulation}`),
      });
      const [oracle] = run.summary.models;
      expect(oracle.attempts).toBeGreaterThan(900 / EVERY);
      expect(oracle).toMatchObject({ failed: 0, fullSequenceMatch: 1 });
      expect(oracle.completion.mean).toBe(1);
      expect(oracle.intentF1.mean).toBe(1);
      expect(oracle.slotF1.mean).toBe(1);
      expect(oracle.errors.none).toBe(oracle.attempts);
    }, 300_000);
  }
});
