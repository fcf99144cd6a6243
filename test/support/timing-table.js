#!/usr/bin/env node
/**
 * The slowest test files of a run: jest's wall time per file (`--json --outputFile`) joined
 * with the CPU that suite-cpu.js recorded (NL2API_TEST_TIMING=<dir>).
 *
 *   NL2API_TEST_TIMING=/tmp/t npm test -- --json --outputFile=/tmp/t/jest.json
 *   node test/support/timing-table.js /tmp/t [N] [--write-durations]
 *
 * --write-durations also writes each file's wall time to test/support/durations.json, the
 * order the sequencer starts the files in on a clone whose jest cache knows none.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const writeDurations = args.includes('--write-durations');
const [dir, count = '20'] = args.filter((arg) => !arg.startsWith('--'));
const report = JSON.parse(readFileSync(path.join(dir, 'jest.json'), 'utf8'));
const cpuFile = path.join(dir, 'cpu.jsonl');
const cpu = new Map(
  (existsSync(cpuFile) ? readFileSync(cpuFile, 'utf8').trim().split('\n') : [])
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .map((row) => [row.file, row]),
);
const rows = report.testResults.map((result) => {
  const file = path.relative(ROOT, result.name);
  const used = cpu.get(file);
  return {
    file,
    tests: result.assertionResults.length,
    wall: (result.endTime - result.startTime) / 1000,
    self: used?.self,
    children: used?.children,
  };
});
rows.sort((a, b) => b.wall - a.wall);
const fmt = (seconds) => (seconds === undefined || Number.isNaN(seconds) ? '-' : seconds.toFixed(1));
const sum = (key) => rows.reduce((total, row) => total + (row[key] ?? 0), 0);
console.log('| file | tests | wall s | CPU s (jest worker) | CPU s (children) |');
console.log('|---|---:|---:|---:|---:|');
for (const row of rows.slice(0, Number(count))) {
  console.log(`| ${row.file} | ${row.tests} | ${fmt(row.wall)} | ${fmt(row.self)} | ${fmt(row.children)} |`);
}
console.log(
  `| all ${rows.length} files | ${sum('tests')} | ${fmt(sum('wall'))} | ${fmt(sum('self'))} | ${fmt(sum('children'))} |`,
);
console.log(
  `jest: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped; ` +
    `${fmt((Math.max(...report.testResults.map((result) => result.endTime)) - report.startTime) / 1000)} s wall`,
);

if (writeDurations) {
  const durations = Object.fromEntries(
    rows.map((row) => [row.file, Math.round(row.wall * 1000)]).sort(([a], [b]) => a.localeCompare(b)),
  );
  const file = new URL('./durations.json', import.meta.url);
  writeFileSync(file, `${JSON.stringify(durations, null, 2)}\n`);
  console.log(`wrote ${path.relative(ROOT, fileURLToPath(file))}`);
}
