import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { differingFiles, outputsOf, progressLines, runInterrupted, type InterruptPoint } from './interrupt.js';

/**
 * Ctrl-C, then a rerun, must give the outputs of an uninterrupted run, byte for byte
 * (stats.json's timing aside). By hand: `node dist/bench/interrupt-bench.js [<source>] [<generate flags>...]`
 * (default source `${NL2API_BIRD_DIR:-../shared/bird-dev}`, all formulations). An uninterrupted
 * reference run, then one run per point (Ctrl-C to the CLI's process group at a share of the
 * reference's progress lines, so the points spread over the whole run), each completed by a
 * rerun on its own cache. Exit code 1 if any rerun differs.
 */

/** Where to interrupt: shares of the reference run's progress lines. */
const SHARES = [0.05, 0.25, 0.45, 0.65, 0.85];

async function main(): Promise<number> {
  const [source = process.env.NL2API_BIRD_DIR ?? path.resolve('..', 'shared', 'bird-dev'), ...flags] =
    process.argv.slice(2);
  // The same relative --out in a directory of its own per run: identical command lines.
  const args = ['generate', '--source', path.resolve(source), '--out', 'out', '--progress', 'log', ...flags];
  const root = mkdtempSync(path.join(os.tmpdir(), 'nl2api-interrupt-'));
  const started = performance.now();
  const referenceDir = path.join(root, 'reference');
  const reference = await completeRun(args, referenceDir);
  const lines = progressLines(reference.stderr);
  console.log(
    `reference: exit ${reference.code}, ${seconds(performance.now() - started)}, ${lines} progress lines, ${reference.outputs.size} files, accepted ${acceptedOf(reference.outputs)}`,
  );
  let identical = 0;
  for (const [i, share] of SHARES.entries()) {
    const point: InterruptPoint = { progressLines: Math.max(1, Math.round(share * lines)) };
    const dir = path.join(root, `point-${i + 1}`);
    mkdirSync(dir);
    const interrupted = await runInterrupted(args, dir, point);
    const rerun = await completeRun(args, dir);
    const differing = differingFiles(reference.outputs, rerun.outputs);
    if (differing.length === 0 && rerun.code === 0) identical++;
    console.log(
      `point ${i + 1}: Ctrl-C after progress line ${point.progressLines}/${lines} (${lastProgress(interrupted.stderr)}): ` +
        `${interrupted.interrupted ? `exit ${interrupted.code}` : 'ended before the point'}; ` +
        `rerun exit ${rerun.code}, accepted ${acceptedOf(rerun.outputs)}, ${differing.length === 0 ? 'byte-identical' : `${differing.length} files differ: ${differing.slice(0, 5).join(', ')}`}`,
    );
  }
  console.log(`${identical}/${SHARES.length} interrupted runs byte-identical to the uninterrupted one after a rerun`);
  if (identical < SHARES.length) console.log(`runs kept for inspection in ${root}`);
  else rmSync(root, { recursive: true, force: true });
  return identical === SHARES.length ? 0 : 1;
}

/** A run to its end in `dir` (created if need be): its exit code, stderr and outputs. */
async function completeRun(args: readonly string[], dir: string) {
  mkdirSync(dir, { recursive: true });
  const run = await runInterrupted(args, dir, { progressLines: Infinity });
  return { ...run, outputs: outputsOf(path.join(dir, 'out')) };
}

/** Accepted samples per formulation, from the manifest's counts. */
function acceptedOf(outputs: ReadonlyMap<string, string>): string {
  const { counts } = JSON.parse(outputs.get('manifest.json') ?? '{"counts":{}}') as {
    counts: Record<string, { accepted: number }>;
  };
  return Object.entries(counts)
    .map(([formulation, { accepted }]) => `${formulation} ${accepted}`)
    .join(', ');
}

const lastProgress = (stderr: string) =>
  stderr
    .match(/^progress.*$/gm)
    ?.pop()
    ?.replace(/\s+/g, ' ')
    .slice(0, 80) ?? 'no progress yet';
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

process.exitCode = await main();
