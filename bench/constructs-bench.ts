import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { RunStats, Tally } from '../pipeline/stats.js';
import { buildConstructsSource } from './constructs-source.js';

/**
 * Issue 34's question set (bench/constructs: 64 questions of our own over two databases of
 * our own, correlated subqueries, window functions, derived joins, compounds, recursive
 * WITH, bare columns the data determines): generated in every formulation, then every sample
 * re-executed by Python's own sqlite3 (bench/recheck.py), which shares no code with nl2api.
 */

export interface ConstructsFigures {
  formulations: Record<string, { accepted: number; input: number; rejectedBy: Record<string, number> }>;
  /** recheck.py's summary line, or why it did not run. */
  recheck: string;
  recheckOk: boolean;
}

export async function constructsBench(
  work: string,
  generate: (args: string[], outDir: string) => Promise<{ stats: RunStats }>,
  root: string,
): Promise<ConstructsFigures> {
  const source = buildConstructsSource(path.join(work, 'constructs-source'));
  const out = path.join(work, 'constructs');
  const { stats } = await generate(['--source', source, '--cache-dir', path.join(work, 'constructs-cache')], out);
  const formulations = Object.fromEntries(Object.entries(stats.formulations).map(([f, s]) => [f, figures(s.total)]));
  const { line, ok } = recheck(root, source, out);
  return { formulations, recheck: line, recheckOk: ok };
}

/** bench/recheck.py on a generated output: its summary line (or why it did not run), and whether every sample agreed. */
export function recheck(root: string, source: string, out: string): { line: string; ok: boolean } {
  const python = ['/usr/bin/python3', 'python3'].find((p) => (p.includes('/') ? existsSync(p) : true))!;
  const run = spawnSync(python, [path.join(root, 'bench', 'recheck.py'), source, out], { encoding: 'utf8' });
  const line = run.error
    ? `not run (${run.error.message})`
    : (run.stdout.trim().split('\n').pop() ?? '') + (run.status === 0 ? '' : ` (exit ${run.status})`);
  return { line, ok: run.status === 0 };
}

function figures(t: Tally): { accepted: number; input: number; rejectedBy: Record<string, number> } {
  return { accepted: t.accepted, input: t.input, rejectedBy: t.rejectedBy };
}

export function constructsLines(c: ConstructsFigures): string[] {
  const coverage = Object.entries(c.formulations).map(
    ([f, s]) =>
      `${f} ${s.accepted}/${s.input} (${((100 * s.accepted) / s.input).toFixed(1)}%${
        Object.keys(s.rejectedBy).length
          ? `; ${Object.entries(s.rejectedBy)
              .map(([r, n]) => `${r} ${n}`)
              .join(', ')}`
          : ''
      })`,
  );
  return [
    `issue 34's constructs set (own questions, own databases; targets SLOT/SEL >= 95%, REST 100%): ${coverage.join(', ')}`,
    `  independent re-execution (python3 sqlite3, bench/recheck.py): ${c.recheck}`,
  ];
}
