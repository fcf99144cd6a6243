import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildDirectoryOnce, isAlive } from '../../pipeline/files.js';

/**
 * What several test files build the same way (the demo's generated dataset), built once per
 * jest run in the run's folder (global-setup.js, NL2API_TEST_RUN_DIR) by whichever file asks
 * first; files that ask meanwhile wait for it. Read it, never write to it: a test copies what
 * it changes. Without the global setup (a bare script), each caller builds its own.
 */
export async function sharedFixture(name: string, build: (dir: string) => Promise<void>): Promise<string> {
  const runDir = process.env.NL2API_TEST_RUN_DIR;
  if (!runDir) {
    const own = mkdtempSync(path.join(os.tmpdir(), `nl2api-${name}-`));
    await build(own);
    return own;
  }
  const target = path.join(runDir, name);
  const lock = `${target}.lock`;
  try {
    mkdirSync(lock); // atomic: one file of the run gets it
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return waitFor(name, target, lock);
  }
  writeFileSync(path.join(lock, 'pid'), String(process.pid));
  try {
    return await buildDirectoryOnce(target, build);
  } catch (error) {
    writeFileSync(`${target}.failed`, error instanceof Error ? (error.stack ?? error.message) : String(error));
    throw error;
  }
}

const POLL_MS = 100;

async function waitFor(name: string, target: string, lock: string): Promise<string> {
  for (;;) {
    if (existsSync(target)) return target;
    if (existsSync(`${target}.failed`)) {
      throw new Error(
        `shared fixture ${name}: its build failed in another test file:\n${readFileSync(`${target}.failed`, 'utf8')}`,
      );
    }
    const builder = Number(readIfPresent(path.join(lock, 'pid')));
    if (builder && !isAlive(builder)) {
      throw new Error(`shared fixture ${name}: the process building it (pid ${builder}) ended without finishing it`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function readIfPresent(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
