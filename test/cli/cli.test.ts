import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkFormat } from '../../verifiers/format.js';
import { FORMAT_VERSION } from '../../pipeline/manifest.js';
import { unprivilegedUser } from '../support/gates.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const demo = path.join(root, 'seeds', 'demo');
/**
 * The built CLI, as the queue and Ctrl-C tests run it (run `npm run build` first; `npm test` does). Not
 * the sources through tsx: its loader costs each CLI process, and each SQL worker it forks,
 * a second or so of transpiling, which was more than half of this file's time.
 */
const main = path.join(root, 'dist', 'cli', 'main.js');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  return cliAs({}, ...args);
}

function cliAs(options: Pick<SpawnSyncOptions, 'uid' | 'gid' | 'env'>, ...args: string[]) {
  const result = spawnSync(process.execPath, [main, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
    ...options,
  });
  return { code: result.status, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** A BIRD folder over the demo's databases with these questions (records as they are, or made from a db and SQL). */
function birdSource(name: string, questions: ({ db_id: string; SQL: string } | string)[]): string {
  const source = path.join(dir, name);
  mkdirSync(source);
  const records = questions.map((q, i) =>
    typeof q === 'string'
      ? q
      : { question_id: i, question: `question ${i}?`, evidence: '', difficulty: 'simple', ...q },
  );
  writeFileSync(path.join(source, 'dev.json'), JSON.stringify(records));
  symlinkSync(path.join(demo, 'dev_databases'), path.join(source, 'dev_databases'));
  return source;
}

describe('nl2api CLI', () => {
  test('a bad --source exits 1 with a clear message', () => {
    const { code, stderr } = cli('generate', '--source', path.join(dir, 'nowhere'), '--out', path.join(dir, 'out'));
    expect(code).toBe(1);
    expect(stderr).toMatch(/^nl2api: source .*nowhere does not exist/m);
    expect(stderr).not.toMatch(/at .*\.[jt]s:\d+/); // no stack trace for a user error
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

    // The error and where to look, not the whole help.
    const badFlag = cli('generate', '--source', demo, '--concurrency', 'lots');
    expect(badFlag.code).toBe(1);
    expect(badFlag.stderr.trim().split('\n')).toEqual([
      "error: option '--concurrency <n>' argument 'lots' is invalid. expected a positive integer",
      '(run nl2api generate --help for the options)',
    ]);

    const badFormulation = cli('generate', '--source', demo, '--formulations', 'slot,graphql');
    expect(badFormulation.code).toBe(1);
    expect(badFormulation.stderr).toMatch(/formulations/);

    const badLayout = cli('export', '--from', dir, '--out', path.join(dir, 'x'), '--live-api-bench-layout', 'flat');
    expect(badLayout.code).toBe(1);
    expect(badLayout.stderr).toMatch(
      /option '--live-api-bench-layout <layout>' argument 'flat' is invalid\. Allowed choices are records, builder, m3/,
    );
  });

  test('--help shows the defaults, taken from the config schema', () => {
    const { code, stdout } = cli('generate', '--help');
    expect(code).toBe(0);
    const help = stdout.replace(/\s+/g, ' ');
    for (const shown of [
      '--formulations <list> comma-separated: slot,sel,rest,chain (default: slot,sel,rest)',
      '--out <dir> output directory (default: output)',
      '--concurrency <n> items in flight (default: 8)',
      '--sql-workers <n> SQL worker processes (default: 2)',
      '--pool <pool> tool pool (default: extended)',
      '(default: auto) (choices: "auto", "bar", "log", "none")',
    ]) {
      expect(help).toContain(shown);
    }
  });

  test('an --out or --cache-dir that is a file, or under one, exits 1 in one line before any work', () => {
    const file = path.join(dir, 'file');
    writeFileSync(file, 'in the way');
    const outIsFile = cli('generate', '--source', demo, '--out', file);
    expect([outIsFile.code, outIsFile.stderr]).toEqual([
      1,
      `nl2api: output folder (--out) ${file} cannot be written: ${file} is a file, not a folder\n`,
    ]);
    const outUnderFile = cli('generate', '--source', demo, '--out', path.join(file, 'out'));
    expect(outUnderFile.stderr).toBe(
      `nl2api: output folder (--out) ${path.join(file, 'out')} cannot be written: ${file} is a file, not a folder\n`,
    );
    const out = path.join(dir, 'out');
    const cacheIsFile = cli(
      'generate',
      '--source',
      demo,
      '--out',
      out,
      '--cache-dir',
      path.join(file, 'cache'),
      '--progress',
      'log',
    );
    expect([cacheIsFile.code, cacheIsFile.stderr]).toEqual([
      1,
      `nl2api: cache folder (--cache-dir) ${path.join(file, 'cache')} cannot be written: ${file} is a file, not a folder\n`,
    ]);
    expect(readdirSync(out)).toEqual([]); // checked before the run: nothing was written
  });

  // procfs answers ENOENT to mkdir under a folder that exists, where node's recursive mkdir spins forever.
  (existsSync('/proc/self') ? test : test.skip)(
    'an --out on a filesystem that makes no folders (/proc/x) exits 1 in one line, at once',
    () => {
      const started = Date.now();
      const generate = cli('generate', '--source', demo, '--out', '/proc/x');
      expect([generate.code, generate.stderr]).toEqual([
        1,
        'nl2api: output folder (--out) /proc/x cannot be written: the filesystem would not create /proc/x\n',
      ]);
      const exported = cli('export', '--from', path.join(dir, 'none'), '--source', demo, '--out', '/proc/x/y');
      expect([exported.code, exported.stderr]).toEqual([
        1,
        'nl2api: the export folder /proc/x/y cannot be written: the filesystem would not create /proc/x\n',
      ]);
      // Each exits as soon as it starts (the bar is 2 s; a loaded machine gets the rest).
      expect(Date.now() - started).toBeLessThan(30_000);
    },
  );

  const unprivileged = unprivilegedUser();
  (unprivileged ? test : test.skip)('a read-only --out exits 1 in one line before any work', () => {
    const readOnly = path.join(dir, 'read-only');
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o555);
    chmodSync(dir, 0o755);
    const { code, stdout, stderr } = cliAs(
      unprivileged!,
      'demo',
      '--out',
      path.join(readOnly, 'out'),
      '--progress',
      'log',
    );
    expect(stderr).not.toMatch(/EACCES.*main\.[jt]s|Cannot find module/); // the CLI itself was readable
    expect([code, stdout, stderr]).toEqual([
      1,
      '',
      `nl2api: output folder (--out) ${path.join(readOnly, 'out')} cannot be written: permission denied\n`,
    ]);
  });

  test('an LLM provider without its API key exits 1 in one line', () => {
    const env = { ...process.env, MISTRAL_API_KEY: '' };
    const noKey = cliAs(
      { env },
      'generate',
      '--source',
      demo,
      '--formulations',
      'rest',
      '--llm-provider',
      'mistral',
      '--out',
      path.join(dir, 'no-key'),
    );
    expect([noKey.code, noKey.stderr]).toEqual([
      1,
      "nl2api: MISTRAL_API_KEY is not set: the LLM provider's API key is read from the environment only\n",
    ]);
  });

  test('serve on a port in use exits 1 in one line', async () => {
    const out = path.join(dir, 'out');
    const database = path.join(demo, 'dev_databases', 'bookstore', 'bookstore.sqlite');
    const fingerprint = createHash('sha256').update(readFileSync(database)).digest('hex');
    mkdirSync(path.join(out, 'rest', 'endpoints'), { recursive: true });
    writeFileSync(
      path.join(out, 'rest', 'endpoints', 'bookstore.json'),
      JSON.stringify({ formatVersion: FORMAT_VERSION, db: 'bookstore', fingerprint, endpoints: [] }),
    );
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as net.AddressInfo).port;
      const { code, stderr } = cli(
        'serve',
        '--source',
        demo,
        '--out',
        out,
        '--db',
        'bookstore',
        '--port',
        String(port),
      );
      expect([code, stderr]).toEqual([
        1,
        `nl2api: cannot listen on 127.0.0.1:${port}: the port is in use (choose another with --port, or --port 0 for any free one) [EADDRINUSE]\n`,
      ]);
    } finally {
      busy.close();
    }
  });

  test('unusable databases are summed up; nothing produced exits 2, --strict exits 3 on any bad input', () => {
    const source = birdSource('some-bad', [
      { db_id: 'bookstore', SQL: 'SELECT count(*) FROM book' },
      { db_id: 'absent', SQL: 'SELECT 1' },
      { db_id: 'absent', SQL: 'SELECT 2' },
    ]);
    const partial = cli(
      'generate',
      '--source',
      source,
      '--out',
      path.join(dir, 'a'),
      '--formulations',
      'slot',
      '--progress',
      'none',
    );
    expect(partial.code).toBe(0);
    expect(partial.stderr).toMatch(
      /^warning: database absent unusable, 2 questions rejected: unknown db_id absent: no absent\.sqlite in /m,
    );
    const strict = cli(
      'generate',
      '--source',
      source,
      '--out',
      path.join(dir, 'a'),
      '--formulations',
      'slot',
      '--progress',
      'none',
      '--strict',
    );
    expect(strict.code).toBe(3);
    expect(strict.stderr).toMatch(/^nl2api: --strict: 2 input records were bad/m);

    const nothing = birdSource('none-valid', [{ db_id: 'absent', SQL: 'SELECT 1' }, 'not a record']);
    const empty = cli(
      'generate',
      '--source',
      nothing,
      '--out',
      path.join(dir, 'b'),
      '--formulations',
      'slot',
      '--progress',
      'none',
    );
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^warning: database absent unusable, 1 question rejected/m);
    expect(empty.stderr).toMatch(/^nl2api: no sample was produced: every question was rejected/m);
  });

  test('generate on the demo writes the datasets, tools, stats and manifest', () => {
    const out = path.join(dir, 'out');
    const { code, stdout, stderr } = cli('generate', '--source', demo, '--out', out, '--progress', 'log');
    expect(stderr).not.toMatch(/unexpected error/);
    expect(code).toBe(0);
    expect(stdout).toMatch(/formulation\s+db\s+input\s+accepted\s+rejected\s+coverage/);
    const stats = JSON.parse(readFileSync(path.join(out, 'stats.json'), 'utf8'));
    for (const f of ['slot', 'sel']) {
      expect(stats.formulations[f].total.input).toBe(
        stats.formulations[f].total.accepted + stats.formulations[f].total.rejected,
      );
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
        const lines = readFileSync(path.join(out, f, `${db}.jsonl`), 'utf8')
          .split('\n')
          .filter(Boolean);
        for (const sample of lines.map((l) => JSON.parse(l))) {
          const sequence = {
            initialization: sample.initialization_step,
            calls: sample.output,
            answerLabels: sample.answer_labels,
          };
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

  test('eval: user errors in one line; generate with an evaluate block scores its output; report merges runs', () => {
    const out = path.join(dir, 'out');
    const config = path.join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ evaluate: { models: ['oracle', 'baseline:knn'], formulations: ['slot'] } }));
    const generated = cli(
      'generate',
      '--source',
      demo,
      '--out',
      out,
      '--formulations',
      'slot',
      '--progress',
      'none',
      '--config',
      config,
    );
    expect(generated.code).toBe(0);
    expect(generated.stdout).toMatch(/evaluation in .*eval/);
    const summary = JSON.parse(readFileSync(path.join(out, 'eval', 'slot', 'summary.json'), 'utf8'));
    expect(
      summary.models.map((m: { model: string; completion: { mean: number } }) => [m.model, m.completion.mean]),
    ).toEqual([
      ['oracle', 1],
      ['baseline:knn', expect.any(Number)],
    ]);

    const noSource = cli('eval', '--dataset', out, '--model', 'oracle');
    expect(noSource).toMatchObject({ code: 1 });
    expect(noSource.stderr).toMatch(/^nl2api: no source given \(--source <dir>\)/m);
    const badModel = cli('eval', '--dataset', out, '--source', demo, '--model', 'gpt4');
    expect(badModel.stderr).toMatch(/^nl2api: unknown model "gpt4": oracle, baseline:knn, or <provider>:<model>/m);
    const notADataset = cli('eval', '--dataset', dir, '--source', demo, '--model', 'oracle');
    expect(notADataset.stderr).toMatch(/manifest\.json \(is it the output folder of nl2api generate\?\)/);
    const noKey = cliAs(
      { env: { ...process.env, MISTRAL_API_KEY: '' } },
      'eval',
      '--dataset',
      out,
      '--source',
      demo,
      '--report',
      path.join(dir, 'r'),
    );
    expect(noKey.stderr).toMatch(/^nl2api: MISTRAL_API_KEY is not set/m);

    const table = cli(
      'eval',
      '--dataset',
      out,
      '--source',
      demo,
      '--model',
      'oracle',
      '--report',
      path.join(dir, 'r1'),
    );
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^oracle\s+50\s+0\s+100\.0%/m);
    const merged = cli(
      'report',
      path.join(dir, 'r1'),
      path.join(out, 'eval', 'slot'),
      '--out',
      path.join(dir, 'merged'),
    );
    expect(merged.code).toBe(0);
    expect(readFileSync(path.join(dir, 'merged', 'index.html'), 'utf8')).toContain('oracle · direct · prompt (r1)');
  });
});
