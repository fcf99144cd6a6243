import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkFormat } from '../../verifiers/format.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const demo = path.join(root, 'seeds', 'demo');
/** tsx's loader by absolute URL: the CLI runs from a temporary working directory. */
const tsx = pathToFileURL(path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', tsx, path.join(root, 'cli', 'main.ts'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('nl2api CLI', () => {
  test('a bad --source exits 1 with a clear message', () => {
    const { code, stderr } = cli('generate', '--source', path.join(dir, 'nowhere'), '--out', path.join(dir, 'out'));
    expect(code).toBe(1);
    expect(stderr).toMatch(/^nl2api: source .*nowhere does not exist/m);
    expect(stderr).not.toMatch(/at .*\.ts:\d+/); // no stack trace for a user error
  });

  test('a missing --source exits 1', () => {
    const { code, stderr } = cli('generate', '--out', path.join(dir, 'out'));
    expect(code).toBe(1);
    expect(stderr).toMatch(/no source given/);
  });

  test('an unknown --db exits 1 naming the available databases', () => {
    const { code, stderr } = cli('generate', '--source', demo, '--db', 'atlantis', '--out', path.join(dir, 'out'));
    expect(code).toBe(1);
    expect(stderr).toMatch(/unknown database atlantis.*available: bookstore/);
  });

  test('bad configuration exits 1', () => {
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ concurrency: -2 }));
    const fromFile = cli('generate', '--source', demo, '--config', bad);
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toMatch(/invalid .*bad\.json[\s\S]*concurrency/);

    const badFlag = cli('generate', '--source', demo, '--concurrency', 'lots');
    expect(badFlag.code).toBe(1);
    expect(badFlag.stderr).toMatch(/positive integer/);

    const badFormulation = cli('generate', '--source', demo, '--formulations', 'slot,graphql');
    expect(badFormulation.code).toBe(1);
    expect(badFormulation.stderr).toMatch(/formulations/);
  });

  test('generate on the demo writes the datasets, tools, stats and manifest', () => {
    const out = path.join(dir, 'out');
    const { code, stdout, stderr } = cli('generate', '--source', demo, '--out', out, '--progress', 'log');
    expect(stderr).not.toMatch(/unexpected error/);
    expect(code).toBe(0);
    expect(stdout).toMatch(/formulation\s+db\s+input\s+accepted\s+rejected\s+coverage/);
    const stats = JSON.parse(readFileSync(path.join(out, 'stats.json'), 'utf8'));
    for (const f of ['slot', 'sel']) {
      expect(stats.formulations[f].total.input).toBe(stats.formulations[f].total.accepted + stats.formulations[f].total.rejected);
      expect(stats.formulations[f].total.accepted).toBeGreaterThan(0);
      for (const db of Object.keys(stats.formulations[f].byDb)) {
        for (const file of [`${f}/${db}.jsonl`, `tools/${f}/${db}.json`, `openapi/${f}/${db}.json`]) {
          expect(existsSync(path.join(out, file))).toBe(true);
        }
      }
    }
    // Every published sample is valid against its database's published tool specs.
    for (const f of ['slot', 'sel']) {
      for (const db of Object.keys(stats.formulations[f].byDb)) {
        const tools = JSON.parse(readFileSync(path.join(out, 'tools', f, `${db}.json`), 'utf8'));
        const lines = readFileSync(path.join(out, f, `${db}.jsonl`), 'utf8').split('\n').filter(Boolean);
        for (const sample of lines.map((l) => JSON.parse(l))) {
          const sequence = { initialization: sample.initialization_step, calls: sample.output, answerLabels: sample.answer_labels };
          expect(checkFormat(sequence, tools)).toMatchObject({ ok: true });
        }
      }
    }
    expect(existsSync(path.join(out, 'rejections.jsonl'))).toBe(true);
    expect(existsSync(path.join(out, 'manifest.json'))).toBe(true);
    expect(existsSync(path.join(out, '.cache', 'run-store.sqlite'))).toBe(true);

    // Warm rerun: the same files, nothing recomputed.
    const before = readFileSync(path.join(out, 'slot', 'bookstore.jsonl'), 'utf8');
    const again = cli('generate', '--source', demo, '--out', out, '--progress', 'none');
    expect(again.code).toBe(0);
    expect(readFileSync(path.join(out, 'slot', 'bookstore.jsonl'), 'utf8')).toBe(before);
    const warm = JSON.parse(readFileSync(path.join(out, 'stats.json'), 'utf8'));
    expect(warm.timing.outputsReused).toBe(true);
  });

  test('demo prints the summary table', () => {
    const out = path.join(dir, 'demo');
    const { code, stdout } = cli('demo', '--out', out, '--progress', 'none');
    expect(code).toBe(0);
    expect(stdout).toMatch(/slot\s+bookstore\s+\d+\s+\d+\s+\d+\s+[\d.]+%/);
    expect(stdout).toMatch(/sel\s+TOTAL/);
    const first = JSON.parse(readFileSync(path.join(out, 'slot', 'bookstore.jsonl'), 'utf8').split('\n')[0]);
    expect(first.dataset_name).toBe('nl2api-demo');
  });
});
