#!/usr/bin/env node
/**
 * `npm test`: the build, then jest with the linters beside it.
 *
 * The build comes first: the CLI tests run `dist/`. The linters need nothing jest makes, so
 * they run while jest does, at a lower CPU priority: jest's files spend much of their time
 * waiting (on child processes, locks, timeouts), and the linters take that idle CPU instead
 * of holding jest back by a minute. Jest's output is live; each linter's is held and printed
 * whole after jest's, with its verdict. The exit code fails if anything failed. Arguments go
 * to jest:
 *
 *   node test/support/run-tests.js [jest arguments]
 */
import { spawn } from 'node:child_process';
import os from 'node:os';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const BUILD = 'build';
const LINTERS = ['lint:eslint', 'lint:format'];
/** A nice value: the linters yield to jest, not the other way round. */
const LINT_PRIORITY = 10;

/** An npm script, its output held; resolves with its verdict and output once it ends. */
function runHeld(name, { priority } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(NPM, ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    if (priority !== undefined && child.pid !== undefined) {
      try {
        os.setPriority(child.pid, priority);
      } catch {
        // Not allowed here: it runs at the normal priority, which only costs time.
      }
    }
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => (output += `${error.message}\n`));
    child.on('close', (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const verdict = code === 0 ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`;
      resolve({ ok: code === 0, report: `> npm run ${name}: ${verdict}, ${seconds} s\n${output}` });
    });
  });
}

/** Jest with its output live; resolves with whether it passed. */
function runJest(args) {
  return new Promise((resolve) => {
    const jest = spawn(process.execPath, ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', ...args], {
      stdio: 'inherit',
    });
    jest.on('error', (error) => {
      process.stderr.write(`jest: ${error.message}\n`);
      resolve(false);
    });
    jest.on('close', (code) => resolve(code === 0));
  });
}

const build = await runHeld(BUILD);
process.stdout.write(build.report);
if (!build.ok) {
  process.exitCode = 1;
} else {
  const linting = Promise.all(LINTERS.map((name) => runHeld(name, { priority: LINT_PRIORITY })));
  const jestPassed = await runJest(process.argv.slice(2));
  const linted = await linting;
  for (const { report } of linted) process.stdout.write(report);
  process.exitCode = jestPassed && linted.every(({ ok }) => ok) ? 0 : 1;
}
