/**
 * What the test suite needs from outside the repository, and which test files go without it.
 * Plain JavaScript: jest.config.js and the global setup read it before any TypeScript is
 * compiled; the tests read it too (gates.d.ts).
 *
 * - BIRD dev (`${NL2API_BIRD_DIR:-../shared/bird-dev}`): the test files that use BIRD_DIR
 *   skip their BIRD blocks when it is absent (a clone from elsewhere has no ../shared).
 * - A user whom permission bits stop: the permission tests run the CLI as `nobody` when the
 *   suite runs as root (root ignores them), which needs a checkout `nobody` can read.
 * - Redis (REDIS_URL, or a redis-server binary to start one per file): without either, the
 *   files that use the test Redis are left out of the run, except in CI (CI=true), where a
 *   missing Redis is a setup error that must fail loudly (test/support/redis.ts says how).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const birdDir = (env) => env.NL2API_BIRD_DIR ?? path.resolve(ROOT, '../shared/bird-dev');
export const BIRD_DIR = birdDir(process.env);

/** Test files (relative to the repository, `/`-separated) whose source matches `pattern`. */
function testFilesMatching(pattern) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.test.ts') && pattern.test(readFileSync(full, 'utf8'))) files.push(full);
    }
  };
  walk(path.join(ROOT, 'test'));
  return files.map((file) => path.relative(ROOT, file).split(path.sep).join('/')).sort();
}

/**
 * Spawn options that run a child as a user whom permission bits stop: the current user, or
 * `nobody` (65534) under root if it can read the checkout; null when there is no such user.
 */
export function unprivilegedUser() {
  if (process.getuid?.() !== 0) return {};
  const nobody = { uid: 65534, gid: 65534 };
  const probe = spawnSync(
    process.execPath,
    ['-e', `require('fs').accessSync(${JSON.stringify(path.join(ROOT, 'cli', 'main.ts'))})`],
    {
      ...nobody,
      stdio: 'ignore',
      timeout: 30_000,
    },
  );
  return probe.status === 0 ? nobody : null;
}

function redisServerRuns(env) {
  const result = spawnSync('redis-server', ['--version'], { stdio: 'ignore', timeout: 10_000, env });
  return result.status === 0;
}

/**
 * The gates that are closed in this environment: what is missing, the test files concerned,
 * and whether those files are left out whole (`wholeFiles`) or skip only their gated blocks.
 */
export function closedGates(env = process.env) {
  const closed = [];
  const bird = birdDir(env);
  if (!existsSync(bird)) {
    closed.push({
      reason: `no BIRD dev at ${bird} (set NL2API_BIRD_DIR to use one elsewhere)`,
      what: 'the BIRD dev tests in',
      files: testFilesMatching(/\bBIRD_DIR\b/),
      wholeFiles: false,
    });
  }
  if (!unprivilegedUser()) {
    closed.push({
      reason: 'running as root in a checkout the user nobody cannot read (root ignores permission bits)',
      what: 'the read-only folder tests in',
      files: testFilesMatching(/\bunprivilegedUser\b/),
      wholeFiles: false,
    });
  }
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  if (!env.REDIS_URL && !ci && !redisServerRuns(env)) {
    closed.push({
      reason: 'no REDIS_URL and no redis-server on PATH (in CI, CI=true, this fails instead)',
      what: 'the Redis test files',
      files: testFilesMatching(/from '[^']*\/(redis|redis-process)\.js'/),
      wholeFiles: true,
    });
  }
  return closed;
}
