import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureProcessTree } from './process-tree.js';
import { nodeArgs } from './node-args.js';
import { runIfMain } from './run-main.js';

/**
 * npm run profile [-- <bird-dir>] [-- --formulations slot,sel]: a cold `generate` under
 * node's sampling profiler, the main process and every SQL worker (the pool passes
 * --cpu-prof on when NL2API_CPU_PROF_DIR is set), and the tables a reader needs to see where
 * the CPU goes: per process kind, the top self-time frames and the share per area (our
 * folders, each npm package, V8's garbage collector, node's internals). The sampling profiler
 * samples JavaScript threads only: the processes' CPU, polled from /proc, also counts V8's own
 * threads (the optimizing compiler, concurrent marking and sweeping: a fifth of a cold run's
 * CPU before cli/heap.ts raised the optimization budget).
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOP_FRAMES = 25;

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time per node id, in ms: each sample is charged the time until the next one. */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const times = new Map<number, number>();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    const micros = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : 0;
    times.set(samples[i], (times.get(samples[i]) ?? 0) + micros / 1000);
  }
  return times;
}

/** Where a frame's code lives: one of our folders, an npm package, or what node and V8 call it. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const [first, second] = url.slice(modules + 'node_modules/'.length).split('/');
    return first.startsWith('@') ? `${first}/${second}` : first;
  }
  if (url.startsWith('node:')) return 'node internals';
  const ours = url.indexOf('/dist/');
  if (ours >= 0)
    return url
      .slice(ours + '/dist/'.length)
      .split('/')
      .slice(0, 2)
      .join('/')
      .replace(/\.js$/, '');
  return url;
}

function frameName(frame: CallFrame): string {
  const file = frame.url ? `${areaOf(frame)}:${path.basename(frame.url)}:${frame.lineNumber + 1}` : '';
  return `${frame.functionName || '(anonymous)'} ${file}`.trim();
}

export interface ProfileSummary {
  processes: number;
  totalMs: number;
  frames: [string, number][];
  areas: [string, number][];
}

/** The profiles' self time (idle excluded), by frame and by area, largest first. */
export function summarize(profiles: CpuProfile[]): ProfileSummary {
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalMs = 0;
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    for (const [id, ms] of selfTimes(profile)) {
      const frame = byId.get(id)!;
      if (frame.functionName === '(idle)') continue;
      totalMs += ms;
      const name = frameName(frame);
      frames.set(name, (frames.get(name) ?? 0) + ms);
      const area = areaOf(frame);
      areas.set(area, (areas.get(area) ?? 0) + ms);
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { processes: profiles.length, totalMs, frames: sorted(frames).slice(0, TOP_FRAMES), areas: sorted(areas) };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export function renderSummary(title: string, summary: ProfileSummary): string {
  const pct = (ms: number) => `${((100 * ms) / summary.totalMs).toFixed(1).padStart(5)} %`;
  const ms = (value: number) => `${Math.round(value).toString().padStart(7)} ms`;
  const lines = [
    `## ${title}: ${summary.processes} profile(s) (a worker thread has its own), ${seconds(summary.totalMs)} sampled`,
    '',
    `top ${TOP_FRAMES} frames by self time:`,
    ...summary.frames.map(([name, t]) => `${ms(t)} ${pct(t)}  ${name}`),
    '',
    'self time by area:',
    ...summary.areas.filter(([, t]) => t / summary.totalMs >= 0.005).map(([name, t]) => `${ms(t)} ${pct(t)}  ${name}`),
    '',
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const source = args[0] && !args[0].startsWith('--') ? args.shift()! : path.resolve(root, '..', 'shared', 'bird-dev');
  const extra = args.length > 0 ? args : ['--formulations', 'slot,sel'];
  const work = mkdtempSync(path.join(os.tmpdir(), 'nl2api-profile-'));
  const profiles = path.join(work, 'profiles');
  try {
    const command = [
      '--cpu-prof',
      `--cpu-prof-dir=${profiles}`,
      ...nodeArgs('cli/main'),
      'generate',
      '--progress',
      'none',
    ];
    const run = await measureProcessTree(
      process.execPath,
      [...command, '--source', source, '--out', path.join(work, 'out'), ...extra],
      { cwd: root, env: { ...process.env, NL2API_CPU_PROF_DIR: profiles }, echoStderr: true },
    );
    if (run.exitCode !== 0) throw new Error(`generate exited with ${run.exitCode ?? run.signal}`);
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; the main process is the one we started.
    const read = (name: string) => JSON.parse(readFileSync(path.join(profiles, name), 'utf8')) as CpuProfile;
    const files = readdirSync(profiles).filter((name) => name.endsWith('.cpuprofile'));
    const isMain = (name: string) => name.split('.')[3] === String(run.pid);
    const main = files.filter(isMain).map(read);
    const workers = files.filter((name) => !isMain(name)).map(read);
    const stats = JSON.parse(readFileSync(path.join(work, 'out', 'stats.json'), 'utf8')) as {
      timing: { stages: Record<string, { ms: number; runs: number }> };
    };
    const stages = Object.entries(stats.timing.stages).map(
      ([name, s]) =>
        `${Math.round(s.ms).toString().padStart(7)} ms  ${name} (${s.runs} runs; summed over items in flight)`,
    );
    process.stdout.write(
      [
        `# profile of a cold generate on ${source} (${extra.join(' ')})`,
        '',
        `wall ${seconds(run.wallMs)}, CPU ${seconds(run.cpuMs)} (main process ${seconds(run.mainCpuMs)}, SQL workers ${seconds(run.cpuMs - run.mainCpuMs)}), main peak RSS ${run.peakMainRssMb} MB`,
        "the profiles sample each process's JavaScript thread while it is not idle (waiting for a core counts too: read shares more than seconds); V8's compiler and GC threads are in the process's CPU above, not in its samples",
        // Measured 2026-11-29: the sampler charged 1.0-1.4 s of a cold run to writeBuffer, perf 0.2 s.
        'read native frames with care: `perf record -g` of the same run puts writeBuffer (the IPC send) at a fifth of what this table charges it (the sampler charges some time the thread spends outside JavaScript to the last native frame it entered)',
        '',
        renderSummary('main process', summarize(main)),
        renderSummary('SQL workers', summarize(workers)),
        '## stages (stats.json timing: wall time per stage, overlapping)',
        ...stages,
        '',
      ].join('\n'),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, 'profile', main);
