#!/usr/bin/env node
/**
 * Runs npm scripts at once and fails if any fails: `npm test`'s checks before jest (the build,
 * which the CLI tests run, and the linters). Each is mostly one thread, so on two cores side
 * by side they take about as long as the longest, not the sum. Each script's output is held
 * and printed whole when it ends, so that the outputs do not interleave.
 *
 *   node test/support/run-parallel.js build lint:eslint lint:format
 */
import { spawn } from 'node:child_process';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function runScript(name) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(NPM, ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => (output += `${error.message}\n`));
    child.on('close', (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const verdict = code === 0 ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`;
      process.stdout.write(`> npm run ${name}: ${verdict}, ${seconds} s\n${output}`);
      resolve(code === 0);
    });
  });
}

const scripts = process.argv.slice(2);
const results = await Promise.all(scripts.map(runScript));
process.exitCode = results.every(Boolean) ? 0 : 1;
