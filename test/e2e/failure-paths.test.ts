import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import { generate } from '../../pipeline/generate.js';
import type { Rejection } from '../../core/model.js';

/**
 * The real pipeline (real stages, the killable SQL pool) on a generic JSONL source full of
 * bad input: every bad item ends in its own categorized rejection, the good ones are
 * accepted, and the counts add up.
 */

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-e2e-'));
  shopDb(path.join(dir, 'shop.sqlite'), 8000);
  writeFileSync(path.join(dir, 'broken.sqlite'), 'this is not a database');

  const q = (id: string, sql: string, db_id = 'shop') => JSON.stringify({ id, db_id, question: `question ${id}`, sql });
  const lines = [
    q('good', 'SELECT COUNT(*) FROM t WHERE v > 5'),
    q('good-or', "SELECT name FROM t WHERE v = 3 OR name = 'n7' ORDER BY name LIMIT 3"),
    q('syntax', 'SELEC v FROM t'),
    q('not-select', 'DELETE FROM t'),
    q('runaway', 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c'),
    q('unparsable', 'SELECT v FROM t WHERE v IS NOT DISTINCT FROM 3'),
    q('window', 'SELECT name, FIRST_VALUE(v) OVER (ORDER BY name) FROM t'),
    q('nodb', 'SELECT 1', 'atlantis'),
    q('corrupt', 'SELECT 1', 'broken'),
    '{"id": "half", "db_id": ',
    q('good', 'SELECT 2'),
  ];
  writeFileSync(path.join(dir, 'questions.jsonl'), `${lines.join('\n')}\n`);

  // A source of its own for the execute timeout: SQL that finishes as gold (one join, 4M
  // row pairs counted) and that no machine runs within 1 ms.
  mkdirSync(path.join(dir, 'slow'));
  shopDb(path.join(dir, 'slow', 'shop.sqlite'), 2000);
  writeFileSync(
    path.join(dir, 'slow', 'questions.jsonl'),
    `${q('slow', 'SELECT COUNT(*) FROM t AS a INNER JOIN t AS b ON a.k = b.k')}\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** t(k, v, name) with `rows` rows, all of them k = 1. */
function shopDb(file: string, rows: number): void {
  const db = new Database(file);
  db.exec('CREATE TABLE t (k INTEGER, v INTEGER, name TEXT)');
  const insert = db.prepare('INSERT INTO t VALUES (1, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(i % 10, `n${i}`);
  })();
  db.close();
}

test('bad input, failing SQL, timeouts and unsupported SQL are categorized per item; counts add up', async () => {
  const out = path.join(dir, 'out');
  // The runaway runs until the gold time limit, whatever the machine; everything else is
  // trivial SQL, within it even on a heavily loaded machine (where it can take seconds).
  const config = parseConfig({ source: dir, out, goldTimeoutMs: 10_000, progress: 'none' });
  const result = await generate({ config });
  expect(result.aborted).toBe(false);

  const rejections = readRejections(out);
  const verdict = (id: string, formulation = 'slot') => {
    const r = rejections.filter((x) => x.id === id && x.formulation === formulation);
    return r.map((x) => `${x.stage}:${x.category}`);
  };
  expect(verdict('syntax')).toEqual(['gold:gold_error']);
  expect(verdict('not-select')).toEqual(['gold:gold_error']);
  expect(verdict('runaway')).toEqual(['gold:gold_timeout']);
  expect(verdict('unparsable')).toEqual(['parse:parse_error']);
  expect(verdict('window')).toEqual(['slot.decompose:unsupported:window_function']);
  expect(verdict('nodb')).toEqual(['ingest:bad_input']);
  expect(verdict('corrupt')).toEqual(['ingest:bad_input']);
  expect(rejections.filter((r) => r.stage === 'ingest' && /line 11|half|JSON/i.test(r.message)).length).toBeGreaterThan(
    0,
  );
  // The second "good" is a duplicate id: rejected, and the first one is kept.
  expect(verdict('good')).toEqual(['ingest:bad_input']);

  const accepted = (f: string) =>
    readFileSync(path.join(out, f, 'shop.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { sample_id: string }).sample_id);
  expect(verdict('good-or')).toEqual([]);
  expect(accepted('slot')).toEqual(['good', 'good-or']);
  expect(accepted('sel')).toEqual(['good', 'good-or']);

  const stats = result.stats!;
  for (const f of ['slot', 'sel'] as const) {
    const total = stats.formulations[f]!.total;
    expect(total.input).toBe(11);
    expect(total.accepted).toBe(2);
    expect(total.accepted + total.rejected).toBe(total.input);
    expect(Object.values(total.rejectedBy).reduce((a, b) => a + b, 0)).toBe(total.rejected);
    expect(rejections.filter((r) => r.formulation === f)).toHaveLength(total.rejected);
  }
}, 60_000);

test('SQL slower than the execute time limit → verify:execution:timeout, though it passed as gold', async () => {
  const out = path.join(dir, 'slow', 'out');
  // No time limit worth the name for gold, 1 ms for executing the tool calls: the verdict
  // does not depend on how fast the machine is.
  const config = parseConfig({
    source: path.join(dir, 'slow'),
    out,
    formulations: ['slot', 'sel'],
    goldTimeoutMs: 120_000,
    executeTimeoutMs: 1,
    progress: 'none',
  });
  const result = await generate({ config });
  expect(result.aborted).toBe(false);
  const rejections = readRejections(out);
  expect(rejections.map((r) => `${r.formulation} ${r.stage}:${r.category}`)).toEqual([
    'slot verify:execution:timeout',
    'sel verify:execution:timeout',
  ]);
}, 150_000);

function readRejections(out: string): Rejection[] {
  return readFileSync(path.join(out, 'rejections.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Rejection);
}
