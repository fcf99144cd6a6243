import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../core/package-root.js';
import type { RunStats } from '../pipeline/stats.js';
import { nodeArgs } from './node-args.js';
import { measureProcessTree } from './process-tree.js';
import { runIfMain } from './run-main.js';

/**
 * `node dist/bench/side-by-side.js --peer <command> [--rounds 2] [<bird dir>]`: a cold SLOT/SEL
 * `generate` and another builder of the same datasets, in interleaved rounds on the same
 * machine (the machine's load moves both alike), and their ratios. The peer is a shell
 * command that builds its SLOT and SEL datasets cold and prints, as the last line of its
 * stdout, one JSON object: `{"wall_s", "cpu_s", "peak_rss_mb", "slot_items", "sel_items"}`
 * (CPU of its whole process tree). README ("Benchmark") says how the published builder,
 * IBM/m3-train-eval's `invocable_api_hub`, was set up to be that command; its code is
 * never part of this project.
 */

export interface PeerRun {
  wall_s: number;
  cpu_s: number;
  peak_rss_mb: number;
  slot_items: number;
  sel_items: number;
}

interface OwnRun {
  wallS: number;
  cpuS: number;
  mainRssMb: number;
  slot: number;
  sel: number;
}

/** The peer's figures: the last line of its output, which must name every field. */
export function peerRunOf(stdout: string): PeerRun {
  const last = stdout.trim().split('\n').at(-1) ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(last);
  } catch {
    throw new Error(`the peer's last line is not JSON: ${JSON.stringify(last.slice(0, 200))}`);
  }
  const fields = ['wall_s', 'cpu_s', 'peak_rss_mb', 'slot_items', 'sel_items'] as const;
  const run = parsed as Record<string, unknown>;
  const missing = fields.filter((field) => typeof run?.[field] !== 'number');
  if (missing.length > 0) throw new Error(`the peer's figures lack ${missing.join(', ')}: ${last.slice(0, 200)}`);
  return Object.fromEntries(fields.map((field) => [field, run[field]])) as unknown as PeerRun;
}

async function runPeer(command: string): Promise<PeerRun> {
  const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`the peer command exited with ${code}`);
  return peerRunOf(stdout);
}

async function runOwn(birdDir: string): Promise<OwnRun> {
  const out = mkdtempSync(path.join(os.tmpdir(), 'nl2api-side-by-side-'));
  try {
    const run = await measureProcessTree(
      process.execPath,
      [
        ...nodeArgs('cli/main'),
        'generate',
        '--progress',
        'none',
        '--source',
        birdDir,
        '--formulations',
        'slot,sel',
        '--out',
        out,
      ],
      { cwd: packageRoot() },
    );
    if (run.exitCode !== 0) throw new Error(`generate exited with ${run.exitCode ?? run.signal}`);
    const stats = JSON.parse(readFileSync(path.join(out, 'stats.json'), 'utf8')) as RunStats;
    return {
      wallS: run.wallMs / 1000,
      cpuS: run.cpuMs / 1000,
      mainRssMb: run.peakMainRssMb,
      slot: stats.formulations.slot?.total.accepted ?? 0,
      sel: stats.formulations.sel?.total.accepted ?? 0,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const s = (value: number) => `${value.toFixed(2)} s`;

/** `rounds` interleaved rounds, the peer first in each: a table's rows, one per round. */
export async function sideBySide(options: { peer: string; rounds: number; birdDir: string }): Promise<string[]> {
  const rows: string[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    process.stderr.write(`round ${round}: the peer...\n`);
    const peer = await runPeer(options.peer);
    process.stderr.write(`round ${round}: nl2api...\n`);
    const own = await runOwn(options.birdDir);
    rows.push(
      `| ${round} | ${s(peer.cpu_s)} / ${s(own.cpuS)} = **${(peer.cpu_s / own.cpuS).toFixed(1)}×** | ` +
        `${s(peer.wall_s)} / ${s(own.wallS)} = **${(peer.wall_s / own.wallS).toFixed(1)}×** | ` +
        `${Math.round(peer.peak_rss_mb)} MB / main ${own.mainRssMb} MB | ${peer.slot_items} + ${peer.sel_items} / ${own.slot} + ${own.sel} |`,
    );
  }
  return rows;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { peer: { type: 'string' }, rounds: { type: 'string', default: '2' } },
    allowPositionals: true,
  });
  if (!values.peer) throw new Error('--peer <command> is required (see the module comment)');
  const birdDir = path.resolve(positionals[0] ?? path.join(packageRoot(), '..', 'shared', 'bird-dev'));
  const rows = await sideBySide({ peer: values.peer, rounds: Number(values.rounds), birdDir });
  process.stdout.write(
    [
      `side by side on ${birdDir}: the peer (\`${values.peer}\`) / nl2api \`generate --formulations slot,sel\`, cold, interleaved`,
      '',
      '| round | CPU (whole tree) | wall | peak RSS | SLOT + SEL items |',
      '|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}

runIfMain(import.meta.url, 'side-by-side', main);
