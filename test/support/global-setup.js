/**
 * Jest global setup, in the parent process before any test file: says which tests this
 * environment skips (skip-notice.js), and makes the run's folder (.cache/test-runs/<id>,
 * NL2API_TEST_RUN_DIR) with what every file would otherwise build for itself:
 *
 * - the SQL worker (runtime/sql/worker.ts) bundled into one plain-JS module,
 *   NL2API_SQL_WORKER_MODULE: the pools of the tests then fork node on it, not on the .ts
 *   sources through tsx, whose loader cost each worker ~0.3 CPU-s and ~0.4 s to start.
 *   Bundled from the sources at every run, so it is never stale, unlike dist/.
 * - fixtures that several files share (shared-fixture.ts), built there by the first file
 *   that asks.
 *
 * The folder is inside the checkout so that the bundle's own imports (better-sqlite3)
 * resolve from its node_modules; global-teardown.js removes it.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import skipNotice from './skip-notice.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export default async function globalSetup(globalConfig) {
  skipNotice(globalConfig);
  const runs = path.join(ROOT, '.cache', 'test-runs');
  mkdirSync(runs, { recursive: true });
  removeAbandonedRuns(runs);
  const dir = mkdtempSync(path.join(runs, 'run-'));
  // Readable by the user the permission tests run the CLI as (gates.js: unprivilegedUser),
  // whose SQL workers run the bundle too (children inherit the variable).
  chmodSync(dir, 0o755);
  process.env.NL2API_TEST_RUN_DIR = dir;
  process.env.NL2API_SQL_WORKER_MODULE = await bundleSqlWorker(dir);
}

/**
 * Folders of runs that were killed before their teardown. Only day-old ones: a suite running
 * beside this one in the same checkout still uses its own.
 */
function removeAbandonedRuns(runs) {
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  for (const entry of readdirSync(runs)) {
    const dir = path.join(runs, entry);
    if (statSync(dir).mtimeMs < dayAgo) rmSync(dir, { recursive: true, force: true });
  }
}

async function bundleSqlWorker(dir) {
  // The source's own folders: a worker's command line still reads `…/runtime/sql/worker…`.
  const outfile = path.join(dir, 'runtime', 'sql', 'worker.mjs');
  await build({
    entryPoints: [path.join(ROOT, 'runtime', 'sql', 'worker.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'error',
  });
  return outfile;
}
