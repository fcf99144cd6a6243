import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { differingFiles, outputsOf } from '../../bench/interrupt.js';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import { hashJson } from '../../core/hash.js';
import type { ResultSet } from '../../core/model.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import {
  ExecutorClosedError,
  SqlWorkerError,
  type SqlExecutor,
  type SqlRequest,
  type VariantTableRequest,
} from '../../runtime/sql/executor.js';

/**
 * Failures of our own SQL machinery (a worker lost, the executor closed under a run) say
 * nothing about the item: every stage (gold, execute, the REST checks, the live server) must
 * throw them through, never record them. Here on the demo, all three formulations, with an
 * executor that fails some statements: the outputs, after a rerun when needed, must be those
 * of an undisturbed run.
 */

const demo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../seeds/demo');
let dir: string;
let reference: Map<string, string>;

const configOf = (out: string) =>
  parseConfig({ source: demo, out, progress: 'none', backoff: { baseMs: 1, maxMs: 4 } });

/** Fails `fault()` for every third distinct statement, the first `times` times it is run. */
function faultyExecutor(inner: SqlExecutor, fault: () => Error, times: number): SqlExecutor & { faults: number } {
  const seen = new Map<string, number>();
  const executor = {
    faults: 0,
    async run(request: SqlRequest): Promise<ResultSet> {
      const key = hashJson([request.sql, request.params.map(String)]);
      const runs = (seen.get(key) ?? 0) + 1;
      seen.set(key, runs);
      if (parseInt(key.slice(0, 8), 16) % 3 === 0 && runs <= times) {
        executor.faults++;
        throw fault();
      }
      return inner.run(request);
    },
    buildVariantTable: (request: VariantTableRequest) => inner.buildVariantTable(request),
    close: () => inner.close(),
  };
  return executor;
}

async function run(out: string, executor: SqlExecutor): Promise<Map<string, string>> {
  const result = await generate({ config: configOf(out), executor });
  expect(result.aborted).toBe(false);
  return outputsOf(out);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-faults-'));
  const sound = createDirectExecutor();
  reference = await run(path.join(dir, 'reference'), sound);
  await sound.close();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('lost SQL workers are retried: the run is as if nothing had happened', async () => {
  const inner = createDirectExecutor();
  const executor = faultyExecutor(
    inner,
    () => new SqlWorkerError('SQL worker died running the statement (exit code null, signal SIGINT)'),
    1,
  );
  const outputs = await run(path.join(dir, 'lost'), executor);
  await inner.close();
  expect(executor.faults).toBeGreaterThan(10);
  expect(differingFiles(reference, outputs)).toEqual([]);
}, 120_000);

test('statements refused by a closed executor end as uncached internal errors: a rerun completes the run', async () => {
  const out = path.join(dir, 'closed');
  const inner = createDirectExecutor();
  const executor = faultyExecutor(inner, () => new ExecutorClosedError('executor closed'), Infinity);
  const disturbed = await run(out, executor);
  expect(executor.faults).toBeGreaterThan(10);
  expect(disturbed.get('rejections.jsonl')).toMatch(/internal_error/);
  expect(differingFiles(reference, await run(out, inner))).toEqual([]);
  await inner.close();
}, 120_000);
