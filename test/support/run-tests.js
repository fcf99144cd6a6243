#!/usr/bin/env node
/**
 * `npm test`: the static checks and jest. One TypeScript program over tsconfig.json (the
 * sources and the tests) serves
 *
 * - the type check of everything (what `npm run typecheck` does),
 * - the build: dist/ emitted from that program, the tests left out (what `npm run build` does),
 * - ESLint, whose type-aware rules ask that program's checker (what `npm run lint:eslint` does).
 *
 * Run separately, the build and ESLint each made a program of their own and checked the same
 * types again. Prettier (`npm run lint:format`) runs beside the type check in a child process.
 * Jest starts as soon as dist/ is written (the CLI tests run the build), and ESLint runs beside
 * it at a lower priority, in the gaps jest leaves while its tests wait on processes and timers.
 * What ESLint and Prettier say is printed after jest's report. Fails if any check fails, after
 * all have said why. Arguments go to jest:
 *
 *   node test/support/run-tests.js [jest arguments]
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** Emitted by tsconfig.build.json, which is tsconfig.json without the tests. */
const NOT_BUILT = path.join(ROOT, 'test') + path.sep;
/** ESLint's priority beside jest: it takes what jest leaves idle. */
const LINT_NICE = 10;

const formatted = startPrettier();
const { program, host } = createProgram();
const typed = await check('type check (tsc --noEmit)', () => typeCheck(program, host));
const built = await check('build (dist/)', () => build(program, host));
print(typed, built);
const tests = startJest(process.argv.slice(2));
lowerPriority(LINT_NICE);
const linted = await check('eslint', () => lint(program));
const jestOk = await tests;
const later = [linted, await formatted];
print(...later);
process.exitCode = [typed, built, ...later].every((result) => result.ok) && jestOk ? 0 : 1;

async function check(name, run) {
  const started = Date.now();
  const { ok, output } = await run();
  return { name, ok, output, seconds: seconds(started) };
}

function print(...results) {
  for (const { name, ok, seconds, output } of results) {
    process.stdout.write(`> ${name}: ${ok ? 'ok' : 'FAILED'}, ${seconds} s\n${output}`);
  }
}

/** Jest on the sources (jest.config.js), in a child process that writes to this terminal. */
function startJest(args) {
  const jest = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
  const child = spawn(process.execPath, ['--experimental-vm-modules', jest, ...args], { cwd: ROOT, stdio: 'inherit' });
  return new Promise((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`jest did not start: ${error.message}\n`);
      resolve(false);
    });
    child.on('exit', (code) => resolve(code === 0));
  });
}

/** Best effort: where the system refuses, ESLint competes with jest at equal priority. */
function lowerPriority(nice) {
  try {
    os.setPriority(Math.min(19, os.getPriority() + nice));
  } catch {
    // Only a scheduling preference.
  }
}

function createProgram() {
  const started = Date.now();
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  const host = ts.createCompilerHost(parsed.options);
  const created = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
    host,
    configFileParsingDiagnostics: parsed.errors,
  });
  process.stdout.write(`> program: ${parsed.fileNames.length} files, ${seconds(started)} s\n`);
  return { program: created, host };
}

/** The compiler host also formats diagnostics (file names, current directory, new line). */
function typeCheck(program, host) {
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const output = process.stdout.isTTY
    ? ts.formatDiagnosticsWithColorAndContext(diagnostics, host)
    : ts.formatDiagnostics(diagnostics, host);
  return { ok: diagnostics.length === 0, output };
}

function build(program, host) {
  const emitted = program.emit(undefined, (file, text, bom, onError, sources) => {
    if (sources?.every((source) => source.fileName.startsWith(NOT_BUILT))) return;
    host.writeFile(file, text, bom, onError, sources);
  });
  const failed = emitted.diagnostics.length > 0 || emitted.emitSkipped;
  return { ok: !failed, output: failed ? ts.formatDiagnostics(emitted.diagnostics, host) : '' };
}

async function lint(program) {
  const eslint = new ESLint({
    cwd: ROOT,
    cache: true,
    cacheLocation: path.join(ROOT, '.cache', 'eslint') + path.sep,
    // The program above instead of a project service of ESLint's own (eslint.config.js). The
    // cache keys its results by the config as JSON, which a Program is not: it stands by name.
    overrideConfig: {
      files: ['**/*.ts'],
      languageOptions: {
        parserOptions: {
          projectService: false,
          programs: Object.assign([program], { toJSON: () => 'the tsconfig.json program' }),
        },
      },
    },
  });
  const results = await eslint.lintFiles(['.']);
  const formatter = await eslint.loadFormatter('stylish');
  const errors = results.reduce((sum, result) => sum + result.errorCount + result.fatalErrorCount, 0);
  return { ok: errors === 0, output: await formatter.format(results) };
}

/** Prettier in a child process; its output goes to a file until it is printed. */
function startPrettier() {
  const started = Date.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-prettier-'));
  const log = path.join(dir, 'output');
  const fd = openSync(log, 'w');
  const child = spawn(NPM, ['run', '--silent', 'lint:format'], { cwd: ROOT, stdio: ['ignore', fd, fd] });
  closeSync(fd); // the child has its own
  return new Promise((resolve) => {
    const end = (ok, extra = '') => {
      const output = readFileSync(log, 'utf8') + extra;
      rmSync(dir, { recursive: true, force: true });
      resolve({ name: 'prettier', ok, output, seconds: seconds(started) });
    };
    child.on('error', (error) => end(false, `${error.message}\n`));
    child.on('exit', (code, signal) => end(code === 0, code === 0 ? '' : `(${signal ?? `exit ${code}`})\n`));
  });
}

function seconds(started) {
  return ((Date.now() - started) / 1000).toFixed(1);
}
