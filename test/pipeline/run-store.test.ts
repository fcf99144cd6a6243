import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeFingerprint, fingerprintOf } from '../../pipeline/code-fingerprint.js';
import { runInProcess } from '../../pipeline/runner/in-process.js';
import { cacheKeyOf, RunStore } from '../../pipeline/store/run-store.js';
import type { Instance } from '../../core/model.js';
import { nullExecutor, toyConfig, toyDb, toyInstances, toyStages, type ToyLog } from './fixtures/toy.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function runWith(store: RunStore, instances: Instance[], log?: ToyLog, code?: string) {
  const { stages, log: used } = toyStages({ log });
  const run = await runInProcess({
    config: toyConfig(),
    databases: [toyDb()],
    instances,
    stages,
    executor: nullExecutor,
    store,
    codeFingerprint: code,
  });
  return { run, calls: used.calls };
}

describe('run store', () => {
  test('a rerun with nothing changed recomputes nothing and gives the same results', async () => {
    const instances = toyInstances(['SELECT 0', 'SELECT BADGOLD', 'SELECT BADSEL', 'SELECT WRONG', 'SELECT 4']);
    const first = new RunStore({ dir });
    const cold = await runWith(first, instances);
    first.close();
    expect(cold.calls.length).toBeGreaterThan(0);

    const second = new RunStore({ dir });
    const warm = await runWith(second, instances);
    second.close();
    expect(warm.calls).toEqual([]);
    expect(warm.run.items).toEqual(cold.run.items);
    expect(warm.run.metrics.get('gold')).toMatchObject({ runs: 0, cacheHits: 5 });
  });

  test('changing one question recomputes only that question', async () => {
    const sqls = ['SELECT 0', 'SELECT 1', 'SELECT 2', 'SELECT 3'];
    const store = new RunStore({ dir });
    await runWith(store, toyInstances(sqls));
    const changed = [...sqls];
    changed[2] = 'SELECT 2 + 0';
    const { calls } = await runWith(store, toyInstances(changed));
    store.close();
    expect(calls.sort()).toEqual(
      ['gold', 'parse', 'slot.decompose', 'sel.expand', 'execute.slot', 'execute.sel', 'verify.slot', 'verify.sel']
        .map((s) => `${s}:SELECT 2 + 0`)
        .sort(),
    );
  });

  test('rejections are cached, internal errors are not', async () => {
    const instances = toyInstances(['SELECT BADPARSE', 'SELECT THROW']);
    const store = new RunStore({ dir });
    await runWith(store, instances);
    const { calls } = await runWith(store, instances);
    store.close();
    expect(calls).toEqual(['slot.decompose:SELECT THROW']);
  });

  test('with reads off everything recomputes, and the results are still stored', async () => {
    const instances = toyInstances(['SELECT 0']);
    const store = new RunStore({ dir });
    await runWith(store, instances);
    store.close();
    const noRead = new RunStore({ dir, read: false });
    const { calls } = await runWith(noRead, instances);
    noRead.close();
    expect(calls).toHaveLength(8);
  });

  test('keys hash the stage name, version, code and parts, whatever the key order', () => {
    expect(cacheKeyOf('gold', 1, { a: 1, b: [2] })).toBe(cacheKeyOf('gold', 1, { b: [2], a: 1 }));
    expect(cacheKeyOf('gold', 1, { a: 1 })).not.toBe(cacheKeyOf('gold', 2, { a: 1 }));
    expect(cacheKeyOf('gold', 1, { a: 1 })).not.toBe(cacheKeyOf('parse', 1, { a: 1 }));
    expect(cacheKeyOf('gold', 1, { a: 1 }, undefined, 'build-a')).not.toBe(
      cacheKeyOf('gold', 1, { a: 1 }, undefined, 'build-b'),
    );
  });

  test('a changed build recomputes everything; the same build with one changed question only that question', async () => {
    const sqls = ['SELECT 0', 'SELECT BADGOLD', 'SELECT 2'];
    const store = new RunStore({ dir });
    const first = await runWith(store, toyInstances(sqls), undefined, 'build-a');
    expect(first.calls).toHaveLength(2 * 8 + 1);
    expect((await runWith(store, toyInstances(sqls), undefined, 'build-a')).calls).toEqual([]);
    // Another build: nothing from the old one is served, stage versions untouched.
    const rebuilt = await runWith(store, toyInstances(sqls), undefined, 'build-b');
    expect(rebuilt.calls.sort()).toEqual([...first.calls].sort());
    const changed = [...sqls];
    changed[2] = 'SELECT 2 + 0';
    const { calls } = await runWith(store, toyInstances(changed), undefined, 'build-b');
    store.close();
    expect(calls.every((c) => c.endsWith(':SELECT 2 + 0'))).toBe(true);
    expect(calls).toHaveLength(8);
  });

  test('the build fingerprint covers module contents, the version and dependency versions', () => {
    const code = path.join(dir, 'code');
    mkdirSync(path.join(code, 'pipeline', 'stages'), { recursive: true });
    mkdirSync(path.join(code, 'cli'), { recursive: true });
    writeFileSync(path.join(code, 'pipeline', 'stages', 'gold.js'), 'export const v = 1;');
    writeFileSync(path.join(code, 'cli', 'main.js'), 'console.log(1);');
    const input = { codeRoot: code, extension: '.js', version: '1.0.0', dependencies: { 'node-sql-parser': '5.4.0' } };
    const base = fingerprintOf(input);
    expect(fingerprintOf(input)).toBe(base);
    // The CLI does not shape results; a .d.js-like or other-extension file is not a module of this build.
    writeFileSync(path.join(code, 'cli', 'main.js'), 'console.log(2);');
    writeFileSync(path.join(code, 'pipeline', 'notes.ts'), 'x');
    expect(fingerprintOf(input)).toBe(base);
    expect(fingerprintOf({ ...input, version: '1.0.1' })).not.toBe(base);
    expect(fingerprintOf({ ...input, dependencies: { 'node-sql-parser': '5.4.1' } })).not.toBe(base);
    writeFileSync(path.join(code, 'pipeline', 'stages', 'gold.js'), 'export const v = 2;');
    expect(fingerprintOf(input)).not.toBe(base);
    // This build's own fingerprint is stable within a process.
    expect(codeFingerprint()).toMatch(/^[0-9a-f]{64}$/);
    expect(codeFingerprint()).toBe(codeFingerprint());
  });

  test('a warm rerun serves whole item results in batched reads, without reading stage outcomes', async () => {
    const instances = toyInstances(['SELECT 0', 'SELECT BADPARSE', 'SELECT BADSEL', 'SELECT 3']);
    const first = new RunStore({ dir });
    const cold = await runWith(first, instances);
    first.close();
    const second = new RunStore({ dir });
    const reads: string[] = [];
    const get = second.get.bind(second);
    second.get = <T>(key: string) => {
      reads.push(key);
      return get<T>(key);
    };
    const warm = await runWith(second, instances);
    second.close();
    expect(reads).toEqual([]);
    expect(warm.calls).toEqual([]);
    expect(warm.run.items).toEqual(cold.run.items);
    // Cache hits count the stages each result went through.
    expect(warm.run.metrics.get('gold')).toMatchObject({ runs: 0, cacheHits: 4 });
    expect(warm.run.metrics.get('slot.decompose')).toMatchObject({ runs: 0, cacheHits: 3 });
    expect(warm.run.metrics.get('sel.expand')).toMatchObject({ runs: 0, cacheHits: 3 });
    expect(warm.run.metrics.get('verify')).toMatchObject({ runs: 0, cacheHits: 5 });
  });

  test('a stage whose key looks inside an upstream value still caches, per stage', async () => {
    const { stages, log } = toyStages();
    // This cache key reads the sequence: keys cannot be planned ahead for it.
    stages.own['sel.expand'] = { ...stages.own['sel.expand'], cacheKey: ({ sequence }) => ({ calls: sequence.calls }) };
    const instances = toyInstances(['SELECT 0', 'SELECT 1']);
    const options = { config: toyConfig(), databases: [toyDb()], instances, stages, executor: nullExecutor };
    const store = new RunStore({ dir });
    const cold = await runInProcess({ ...options, store });
    const callsCold = log.calls.length;
    const warm = await runInProcess({ ...options, store });
    store.close();
    expect(log.calls).toHaveLength(callsCold);
    expect(warm.items).toEqual(cold.items);
    expect(warm.metrics.get('sel.expand')).toMatchObject({ runs: 0, cacheHits: 2 });
  });

  test('database fingerprints are remembered by path, size and mtime', async () => {
    const file = path.join(dir, 'db.sqlite');
    writeFileSync(file, 'one');
    const store = new RunStore({ dir });
    let hashed = 0;
    const hash = async (f: string) => `hash-${++hashed}-${f.length}`;
    const a = await store.fingerprint(file, hash);
    expect(await store.fingerprint(file, hash)).toBe(a);
    expect(hashed).toBe(1);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(await store.fingerprint(file, hash)).not.toBe(a);
    writeFileSync(file, 'two!');
    await store.fingerprint(file, hash);
    expect(hashed).toBe(3);
    store.close();
    // With reads off (--no-cache) every file is hashed again.
    const noRead = new RunStore({ dir, read: false });
    await noRead.fingerprint(file, hash);
    noRead.close();
    expect(hashed).toBe(4);
  });

  test('a store of the older layout is upgraded: its results dropped (no build reads them), its file fingerprints kept', async () => {
    const old = new Database(path.join(dir, 'run-store.sqlite'));
    old.exec(`CREATE TABLE results (key TEXT PRIMARY KEY, stage TEXT NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE fingerprints (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, hash TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO results VALUES ('k', 'gold', '{"ok":true,"value":1}');`);
    const file = path.join(dir, 'db.sqlite');
    writeFileSync(file, 'one');
    const { size, mtimeMs } = statSync(file);
    old.prepare('INSERT INTO fingerprints VALUES (?, ?, ?, ?)').run(file, size, mtimeMs, 'remembered');
    old.close();

    const store = new RunStore({ dir });
    expect(await store.get('k')).toBeUndefined();
    expect(await store.fingerprint(file, async () => 'hashed again')).toBe('remembered');
    store.put('k', 'gold', '{"ok":true,"value":2}');
    await store.flush();
    store.close();
    const reopened = new RunStore({ dir });
    expect(await reopened.get('k')).toEqual({ ok: true, value: 2 });
    reopened.close();
  });

  test('a run killed with SIGKILL mid-way completes on rerun, nothing lost or duplicated', async () => {
    const items = 40;
    const script = path.join(here, 'fixtures', 'slow-run.ts');
    // node itself with tsx's loader (the tsx binary would be a wrapper: SIGKILL must hit the run).
    const start = (...stallFrom: string[]) =>
      spawn(process.execPath, ['--import', 'tsx', script, dir, String(items), '25', ...stallFrom], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'inherit'],
      });

    // First run: kill -9 once a few samples are verified. Its items from the 20th on never
    // finish gold, so the kill lands mid-way however late this process reads the output.
    const child = start('20');
    await new Promise<void>((resolve, reject) => {
      let verified = 0;
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        verified += chunk.split('verified').length - 1;
        if (verified >= 10 && !child.killed) child.kill('SIGKILL');
      });
      child.on('exit', (code, signal) =>
        signal === 'SIGKILL' ? resolve() : reject(new Error(`child ended with ${code}`)),
      );
    });
    const afterKill = new RunStore({ dir });
    const committedGold = afterKill.counts().gold ?? 0;
    afterKill.close();
    expect(committedGold).toBeGreaterThan(0);
    expect(committedGold).toBeLessThan(items);

    // Rerun: completes, recomputing exactly the gold results that were not committed.
    const rerun = start();
    let out = '';
    rerun.stdout.setEncoding('utf8');
    rerun.stdout.on('data', (chunk: string) => (out += chunk));
    const code = await new Promise<number | null>((resolve) => rerun.on('exit', resolve));
    expect(code).toBe(0);
    const summary = JSON.parse(out.trim().split('\n').pop()!) as {
      ids: string[];
      accepted: number;
      gold: { runs: number; cacheHits: number };
    };
    expect(summary.ids).toEqual(Array.from({ length: items }, (_, i) => `q${i}`));
    expect(summary.accepted).toBe(items);
    expect(summary.gold).toMatchObject({ runs: items - committedGold, cacheHits: committedGold });
    const final = new RunStore({ dir });
    expect(final.counts()).toMatchObject({ gold: items, parse: items, verify: 2 * items });
    final.close();
  }, 60_000);
});
