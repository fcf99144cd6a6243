import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, startCli, startWorker, type CliProcess } from '../../bench/queue-harness.js';
import { goldAnswers, startChatServer, type ChatServer } from '../../bench/scripted-chat.js';
import { loadEvalDataset } from '../../eval/dataset.js';
import { redisForTests, type TestRedis } from '../support/redis.js';

/**
 * `nl2api eval --queue` as users run it: the built CLI as driver (`--no-local-workers`) and two
 * `nl2api worker` processes against a real Redis and a scripted OpenAI-compatible model. The
 * report is byte for byte the in-process run's, every question is asked once across the
 * workers (replies shared through Redis), and a rerun on the queue asks nothing.
 */

const DEMO = path.resolve('seeds/demo');
let redis: TestRedis;
let tmp: string;
let chat: ChatServer;

beforeAll(async () => {
  redis = await redisForTests();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'nl2api-eval-queue-'));
  const generated = await runCli([
    'generate',
    '--source',
    DEMO,
    '--out',
    path.join(tmp, 'dataset'),
    '--formulations',
    'slot',
    '--progress',
    'none',
  ]);
  expect(generated.code).toBe(0);
  const dataset = await loadEvalDataset(path.join(tmp, 'dataset'), { formulation: 'slot' });
  chat = await startChatServer({ answers: goldAnswers(dataset.items), delayMs: 20 });
}, 120_000);

afterAll(async () => {
  await chat?.close();
  await redis?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');

test('attempts spread over two workers: the in-process report, each question asked once, a rerun asks nothing', async () => {
  const model = `openai:scripted@${chat.url}/v1`;
  const evalArgs = (report: string) => [
    'eval',
    '--dataset',
    path.join(tmp, 'dataset'),
    '--source',
    DEMO,
    '--model',
    model,
    'baseline:knn',
    '--report',
    report,
  ];
  const inProcess = await runCli(evalArgs(path.join(tmp, 'in-process')));
  expect(inProcess.code).toBe(0);
  const askedInProcess = chat.requests.length;
  expect(askedInProcess).toBe(50);

  const prefix = `${redis.prefix}evalq`;
  const workers: CliProcess[] = [startWorker({ url: redis.url, prefix }), startWorker({ url: redis.url, prefix })];
  try {
    const queued = path.join(tmp, 'queued');
    const queueArgs = ['--queue', redis.url, '--queue-prefix', prefix, '--no-local-workers'];
    const driver = startCli([...evalArgs(queued), ...queueArgs]);
    expect(await driver.exited).toBe(0);
    expect(driver.stderr()).toMatch(/queue eval \S+ .*: 100 of 100 attempts to run/);
    expect(read(queued, 'results.jsonl')).toBe(read(path.join(tmp, 'in-process'), 'results.jsonl'));
    expect(read(queued, 'summary.json')).toBe(read(path.join(tmp, 'in-process'), 'summary.json'));
    // A fresh Redis cache: each question asked once more, by whichever worker took it.
    const asked = chat.requests.slice(askedInProcess);
    expect(asked).toHaveLength(50);
    expect(new Set(asked.map((r) => r.question)).size).toBe(50);
    // Both workers listen on the eval queue (a worker started by `nl2api worker` takes every group).
    const logs = workers.map((w) => w.stderr());
    expect(logs.every((log) => /worker: 1 queue \(eval\)|queues \(.*eval/.test(log))).toBe(true);

    const again = startCli([...evalArgs(path.join(tmp, 'queued-again')), ...queueArgs]);
    expect(await again.exited).toBe(0);
    expect(again.stderr()).toMatch(/: 0 of 100 attempts to run/);
    expect(chat.requests).toHaveLength(askedInProcess + 50);
    expect(read(path.join(tmp, 'queued-again'), 'results.jsonl')).toBe(read(queued, 'results.jsonl'));
  } finally {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
  }
}, 120_000);
