import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { differingFiles, outputsOf, runInterrupted, type InterruptPoint } from '../../bench/interrupt.js';

/**
 * Ctrl-C as a terminal sends it: SIGINT to the whole process group of the built CLI (run
 * `npm run build` first; `npm test` does), at several points of a run, each followed by a
 * rerun on the same cache: the outputs must be those of an uninterrupted run, byte for byte
 * (stats.json's timing aside). The questions' SQL takes a while, so that statements are
 * running in the SQL workers when the signal comes (a worker killed by it used to leave
 * cached gold_error / execution:sql_error rejections behind).
 */

let dir: string;
// One item at a time: a Ctrl-C after the first progress line finds items not yet started (with every item in flight, a
// fast machine finishes them all and exits 0: no interruption to test).
const ARGS = ['generate', '--source', '', '--out', 'out', '--progress', 'log', '--concurrency', '1'];
let args: string[];
let reference: { outputs: Map<string, string>; ms: number };

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-interrupt-'));
  const source = path.join(dir, 'source');
  mkdirSync(source);
  const db = new Database(path.join(source, 'shop.sqlite'));
  db.exec('CREATE TABLE t (k INTEGER, v INTEGER, name TEXT)');
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < 5000; i++) insert.run(i % 10, i % 97, `n${i}`);
  })();
  db.close();
  const question = (id: string, sql: string) => JSON.stringify({ id, db_id: 'shop', question: `question ${id}`, sql });
  const lines = [
    // 2.5M row pairs each: a few hundred milliseconds per statement.
    ...Array.from({ length: 8 }, (_, i) =>
      question(`join-${i}`, `SELECT COUNT(*) FROM t AS a INNER JOIN t AS b ON a.k = b.k WHERE a.v > ${i}`),
    ),
    ...Array.from({ length: 4 }, (_, i) =>
      question(`quick-${i}`, `SELECT name FROM t WHERE v = ${i} ORDER BY name LIMIT 3`),
    ),
  ];
  writeFileSync(path.join(source, 'questions.jsonl'), `${lines.join('\n')}\n`);
  args = ARGS.map((arg) => arg || source);

  const started = Date.now();
  const run = await runInterrupted(args, mkdir('reference'), { progressLines: Infinity });
  expect(run.code).toBe(0);
  reference = { outputs: outputsOf(path.join(dir, 'reference', 'out')), ms: Date.now() - started };
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mkdir(name: string): string {
  const cwd = path.join(dir, name);
  mkdirSync(cwd);
  return cwd;
}

/**
 * Points spread over the reference run's wall time, measured on this machine minutes before:
 * robust to its speed. (Its progress lines were not: they come every 2 s, and a fast machine
 * prints the first at the end.)
 */
const POINTS: [share: number, presses: 1 | 2][] = [
  [0.2, 1],
  [0.4, 1],
  [0.7, 2],
];

test('Ctrl-C at several points, then a rerun: the outputs of an uninterrupted run, byte for byte', async () => {
  const codes: (number | null)[] = [];
  for (const [i, [share, presses]] of POINTS.entries()) {
    const point: InterruptPoint = { afterMs: Math.round(share * reference.ms), presses };
    const cwd = mkdir(`point-${i}`);
    const interrupted = await runInterrupted(args, cwd, point);
    codes.push(interrupted.interrupted ? interrupted.code : 0);
    const rerun = await runInterrupted(args, cwd, { progressLines: Infinity });
    expect({ point, code: rerun.code, stderr: rerun.stderr }).toMatchObject({ code: 0 });
    expect({ point, differing: differingFiles(reference.outputs, outputsOf(path.join(cwd, 'out'))) }).toEqual({
      point,
      differing: [],
    });
  }
  // The run was really interrupted (not merely finished before the signal) at least once.
  expect(codes).toContain(130);
}, 600_000);
