import { afterAll, beforeAll, expect } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, startCli, type CliProcess } from '../../bench/queue-harness.js';
import type { TestRedis } from '../support/redis.js';
import { sharedFixture } from '../support/shared-fixture.js';

/**
 * What the queue backend's end-to-end files share (queue-run.test.ts: runs as users run them;
 * queue-faults.test.ts: faults during a run): the built CLI as driver
 * (`generate --queue … --no-local-workers`) and as `nl2api worker` processes against a real
 * Redis, every run compared with the in-process runner's output on the same input. Two files,
 * not one: most of their time is spent waiting on processes (startups, locks expiring,
 * stalled jobs detected), which jest's two workers overlap when the runs are in two files.
 */

export const DEMO = path.resolve('seeds/demo');

export interface QueueFixture {
  redis: TestRedis;
  tmp: string;
  /** The in-process runner's output on the demo: what a queue run on it must write. */
  reference: string;
}

/** The file's Redis (`startRedis`: the file imports support/redis.js, which gates.js reads), temp dir and reference run. */
export function queueFixture(startRedis: () => Promise<TestRedis>): QueueFixture {
  const fixture = {} as QueueFixture;
  beforeAll(async () => {
    fixture.redis = await startRedis();
    fixture.tmp = mkdtempSync(path.join(os.tmpdir(), 'nl2api-queue-'));
    fixture.reference = await inProcessReference();
  }, 120_000);
  afterAll(async () => {
    await fixture.redis?.stop();
    rmSync(fixture.tmp, { recursive: true, force: true });
  });
  return fixture;
}

/**
 * The in-process runner's output on the demo, from the built CLI with its defaults: built
 * once per jest run for the queue files (shared-fixture.ts). Read it, never write to it.
 */
export function inProcessReference(): Promise<string> {
  return sharedFixture('demo-cli', async (dir) => {
    const run = await runCli(['generate', '--source', DEMO, '--out', dir, '--progress', 'none']);
    if (run.code !== 0) throw new Error(`generate on the demo exited ${run.code}:\n${run.stderr}`);
  });
}

export const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');
export const stats = (dir: string) => JSON.parse(read(dir, 'stats.json'));

let prefixes = 0;
/** A fresh key prefix and out dir per run, so runs never see each other's cache. */
export function fresh(fixture: QueueFixture, name: string) {
  return { prefix: `${fixture.redis.prefix}${name}${prefixes++}`, out: path.join(fixture.tmp, name) };
}

export function driver(url: string, prefix: string, out: string, runId: string, extra: string[] = []): CliProcess {
  return startCli([
    'generate',
    '--source',
    DEMO,
    '--out',
    out,
    '--progress',
    'none',
    '--queue',
    url,
    '--queue-prefix',
    prefix,
    '--no-local-workers',
    '--run',
    runId,
    ...extra,
  ]);
}

export async function stopAll(workers: CliProcess[]): Promise<void> {
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
}

/** Every instance ends exactly once per formulation, and the stats say so. */
export function expectCountsAddUp(dir: string): void {
  for (const [, f] of Object.entries<{ total: { input: number; accepted: number; rejected: number } }>(
    stats(dir).formulations,
  )) {
    expect(f.total.input).toBe(50);
    expect(f.total.accepted + f.total.rejected).toBe(50);
  }
}
