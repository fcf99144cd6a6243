/**
 * Opt-in (NL2API_TEST_TIMING=<dir>): records the CPU a test file costs, its own process's and
 * that of the children it waited for (SQL workers, CLIs, servers), which jest's own timings
 * (wall only) cannot tell apart from waiting. One JSON line per file in <dir>;
 * test/support/timing-table.js joins them with jest's wall times.
 */
/* global afterAll, expect -- jest's globals: this file runs inside each test file's environment */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TICKS_PER_SECOND = 100; // Linux's USER_HZ

/** CPU seconds of this process and of its reaped children, from /proc (Linux only). */
function cpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    return { self: (utime + stime) / TICKS_PER_SECOND, children: (cutime + cstime) / TICKS_PER_SECOND };
  } catch {
    return { self: NaN, children: NaN };
  }
}

const dir = process.env.NL2API_TEST_TIMING;
if (dir) {
  // Taken when jest loads this file, before the test file itself is compiled and loaded.
  const start = cpuSeconds();
  afterAll(() => {
    const end = cpuSeconds();
    const file = path.relative(ROOT, expect.getState().testPath ?? '');
    appendFileSync(
      path.join(dir, 'cpu.jsonl'),
      `${JSON.stringify({ file, self: end.self - start.self, children: end.children - start.children })}\n`,
    );
  });
}
