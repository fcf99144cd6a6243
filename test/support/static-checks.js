#!/usr/bin/env node
/**
 * `npm test`'s checks before jest, on one TypeScript program over tsconfig.json (the sources
 * and the tests):
 *
 * - the type check of everything (what `npm run typecheck` does),
 * - the build: dist/ emitted from that program, the tests left out (what `npm run build` does),
 * - ESLint, whose type-aware rules ask that program's checker (what `npm run lint:eslint` does),
 *
 * and Prettier (`npm run lint:format`) beside them in a child process. Run separately, the build
 * and ESLint each made a program of their own and checked the same types again: ~80 CPU-s on
 * a clean clone where this takes ~50. Fails if any check fails, after all have said why.
 *
 *   node test/support/static-checks.js
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** Emitted by tsconfig.build.json, which is tsconfig.json without the tests. */
const NOT_BUILT = path.join(ROOT, 'test') + path.sep;

const formatted = startPrettier();
const { program, host } = createProgram();
const passed = [
  await check('type check (tsc --noEmit)', () => typeCheck(program)),
  await check('build (dist/)', () => build(program, host)),
  await check('eslint', () => lint(program)),
  await formatted,
];
process.exitCode = passed.every(Boolean) ? 0 : 1;

async function check(name, run) {
  const started = Date.now();
  const { ok, output } = await run();
  report(name, ok, started, output);
  return ok;
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

function typeCheck(program) {
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const formatHost = {
    getCanonicalFileName: (file) => file,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => ts.sys.newLine,
  };
  const output = process.stdout.isTTY
    ? ts.formatDiagnosticsWithColorAndContext(diagnostics, formatHost)
    : ts.formatDiagnostics(diagnostics, formatHost);
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

/** Prettier in a child process; its output goes to a file until the other checks are done. */
function startPrettier() {
  const started = Date.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-prettier-'));
  const log = path.join(dir, 'output');
  const fd = openSync(log, 'w');
  const child = spawn(NPM, ['run', '--silent', 'lint:format'], { cwd: ROOT, stdio: ['ignore', fd, fd] });
  return new Promise((resolve) => {
    const end = (ok, extra = '') => {
      report('prettier', ok, started, readFileSync(log, 'utf8') + extra);
      rmSync(dir, { recursive: true, force: true });
      resolve(ok);
    };
    child.on('error', (error) => end(false, `${error.message}\n`));
    child.on('exit', (code, signal) => end(code === 0, code === 0 ? '' : `(${signal ?? `exit ${code}`})\n`));
  });
}

function report(name, ok, started, output) {
  process.stdout.write(`> ${name}: ${ok ? 'ok' : 'FAILED'}, ${seconds(started)} s\n${output}`);
}

function seconds(started) {
  return ((Date.now() - started) / 1000).toFixed(1);
}
