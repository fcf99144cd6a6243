import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseConfig } from '../config/load.js';
import { goldStatement } from '../generators/sql/gold.js';
import { jsonText, writeFileAtomic } from '../pipeline/files.js';
import { packageRoot } from '../core/package-root.js';
import { loadSource } from '../pipeline/sources/index.js';
import { topRejections, type RunStats, type Tally } from '../pipeline/stats.js';
import { createDirectExecutor } from '../runtime/sql/direct.js';
import { constructsBench, constructsLines } from './constructs-bench.js';
import { chainBench, chainLines } from './chain-bench.js';
import { differentialFigures } from './differential.js';
import { evalBench, evalLines } from './eval-bench.js';
import { protocolBench, protocolLines } from './eval-protocol-bench.js';
import { exportBench, exportLines } from './export-bench.js';
import { mcpBench, mcpLine } from './mcp-bench.js';
import { microBench } from './micro.js';
import { nodeArgs } from './node-args.js';
import { mutationCheck } from './mutation-check.js';
import { queueBench } from './queue-bench.js';
import { restDatasetFigures } from './rest-dataset.js';
import { headOfLine, headOfLineLines } from './head-of-line.js';
import { restThroughput, restThroughputLines } from './rest-throughput.js';
import { badInputSweep, sweepLines } from './bad-input-sweep.js';
import { typeSweepLines, typeSweeps } from './type-sweep.js';
import { runawayLines, runawaySynthesis } from './runaway-synthesis.js';

/**
 * `npm run bench [-- <bird dir>]`: in one run, (a) the baseline: every gold SQL executed
 * once in-process (median of three runs); (b) a cold SLOT/SEL `generate` (fresh output and
 * cache) in a child process (median of three); (c) warm reruns on the same cache: into the
 * same output directory (outputs kept) and into a fresh one (files rendered from cached
 * results); (d) a rerun with one question's SQL changed; (e) the paper tool pool, for
 * coverage; (f) the REST formulation with the template synthesizer, cold and warm: coverage,
 * endpoints before/after dedup, parameters per endpoint (rest-dataset.ts); (f2) issue 34's own
 * question set in every formulation, re-executed by python3 sqlite3 (constructs-bench.ts); (f3) issue 36's
 * chains: cold rest,chain against cold rest, their counts, re-executed by python3 sqlite3 (chain-bench.ts); (g) REST server
 * throughput for three representative endpoints, laned and single-pool, 8 and 32 connections, quiet and with a
 * busy loop per core, with requests per server CPU second and worker recycles per minute (rest-throughput.ts); (g0) head-of-line blocking (head-of-line.ts: a cheap endpoint's
 * latency while 16 clients hammer an expensive one, and right after a kill; laned and single-pool); (g1) every endpoint of (f)'s
 * output served and sent bad input (bad-input-sweep.ts); (g1c) every parameter of those endpoints sent
 * wrong-type values over HTTP and MCP, and the SLOT/SEL tools wrong-type arguments over MCP, with the
 * statements executed counted (type-sweep.ts); (g1b) one database's REST generation with a
 * model proposing runaway queries against the template alone (runaway-synthesis.ts); (h) the queue backend:
 * overhead, scale-out over worker processes, a shared rate limit, incremental nightly runs,
 * faults (queue-bench.ts; NL2API_BENCH_QUEUE=0 skips it); (i) the verifiers on large inputs
 * (micro.ts); and differential verification (differential.ts): its cost against cold runs
 * without it (alternated with (b)), order-dependent and weak gold per database, and the
 * mutation check (mutation-check.ts). Prints the comparison and writes output/bench.json.
 */

const root = packageRoot();
const birdDir = path.resolve(root, process.argv[2] ?? process.env.NL2API_BIRD_DIR ?? '../shared/bird-dev');
const COLD_TARGET = 10;
const WARM_TARGET = 0.1;
/** Issue 35: the published builder's one process peaks at ~138-170 MB on the same questions. */
const MAIN_RSS_TARGET_MB = 150;

interface ChildRun {
  wallMs: number;
  stats: RunStats;
  /** Its output directory, where the caller needs it. */
  dir?: string;
}

async function baseline(): Promise<{ ms: number; queries: number; errors: number }> {
  const source = await loadSource(birdDir);
  const databases = new Map(source.databases.map((db) => [db.dbId, db]));
  const executor = createDirectExecutor();
  const { referenceTime } = parseConfig({});
  let errors = 0;
  const started = performance.now();
  for (const instance of source.instances) {
    const db = databases.get(instance.dbId)!;
    // The statement the gold stage runs (double quotes resolved, the clock pinned).
    const { sql } = goldStatement(instance, db, referenceTime);
    try {
      await executor.run({ dbPath: db.path, sql, params: [], timeoutMs: Infinity });
    } catch {
      errors++;
    }
  }
  const ms = performance.now() - started;
  await executor.close();
  return { ms, queries: source.instances.length, errors };
}

/** `nl2api generate` in a child process: the built CLI, or the sources through tsx when run with tsx. */
async function generateInChild(args: string[], outDir: string): Promise<ChildRun> {
  const command = nodeArgs('cli/main');
  const started = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [...command, 'generate', '--progress', 'none', '--out', outDir, ...args], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', resolve);
  });
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`generate ${args.join(' ')} exited with ${code}`);
  return { wallMs, stats: JSON.parse(readFileSync(path.join(outDir, 'stats.json'), 'utf8')) as RunStats };
}

/**
 * A copy of the source whose first question's gold SQL differs (a trailing space): its
 * questions file copied and edited, everything else linked.
 */
async function sourceWithOneChangedQuestion(work: string): Promise<string> {
  const dir = path.join(work, 'changed-source');
  mkdirSync(dir);
  for (const name of readdirSync(birdDir)) {
    if (name === 'dev.json') continue;
    symlinkSync(path.join(birdDir, name), path.join(dir, name));
  }
  const questions = JSON.parse(readFileSync(path.join(birdDir, 'dev.json'), 'utf8')) as { SQL: string }[];
  questions[0].SQL = `${questions[0].SQL} `;
  writeFileSync(path.join(dir, 'dev.json'), JSON.stringify(questions));
  return dir;
}

const pct = (t: Tally) => (t.input ? (100 * t.accepted) / t.input : 0);
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  if (!existsSync(birdDir)) throw new Error(`BIRD directory ${birdDir} not found (pass it, or set NL2API_BIRD_DIR)`);
  const work = mkdtempSync(path.join(os.tmpdir(), 'nl2api-bench-'));
  try {
    const cacheDir = path.join(work, 'cache');
    const common = ['--source', birdDir, '--formulations', 'slot,sel', '--cache-dir', cacheDir];
    process.stderr.write(`bench on ${birdDir}\n(a) baseline: gold SQL in-process...\n`);
    // The machine is shared and noisy: the baseline is the median of three runs.
    const bases = [await baseline(), await baseline(), await baseline()].sort((a, b) => a.ms - b.ms);
    const base = bases[1];
    process.stderr.write('(b) cold generate, three times, each followed by one without differential verification...\n');
    // Each cold run gets a fresh cache; the median one's cache and outputs serve the warm runs.
    const colds: ChildRun[] = [];
    const coldsWithout: ChildRun[] = [];
    for (const run of [1, 2, 3]) {
      const dir = path.join(work, `cold-${run}`);
      colds.push({ ...(await generateInChild(['--source', birdDir, '--formulations', 'slot,sel'], dir)), dir });
      const without = ['--source', birdDir, '--formulations', 'slot,sel', '--variants', '0'];
      coldsWithout.push(await generateInChild(without, path.join(work, `cold-without-${run}`)));
    }
    const coldWithout = [...coldsWithout].sort((a, b) => a.wallMs - b.wallMs)[1];
    const cold = [...colds].sort((a, b) => a.wallMs - b.wallMs)[1];
    renameSync(cold.dir!, path.join(work, 'cold'));
    renameSync(path.join(work, 'cold', '.cache'), cacheDir);
    process.stderr.write('(c) warm reruns...\n');
    // The nightly case: the same command again, its outputs still on disk.
    const warm = await generateInChild(common, path.join(work, 'cold'));
    // Every item from the cache, but every file rendered anew (a fresh output directory).
    const warmFresh = await generateInChild(common, path.join(work, 'warm'));
    process.stderr.write('(d) one question changed...\n');
    const changed = await generateInChild(
      ['--source', await sourceWithOneChangedQuestion(work), '--formulations', 'slot,sel', '--cache-dir', cacheDir],
      path.join(work, 'changed'),
    );
    process.stderr.write('(d2) mutation check...\n');
    const mutants = {
      singleDatabase: await mutationCheck(birdDir, path.join(work, 'cold'), { cacheDir, variants: 0 }),
      withVariants: await mutationCheck(birdDir, path.join(work, 'cold'), { cacheDir }),
    };
    process.stderr.write('(e) paper pool...\n');
    const paper = await generateInChild([...common, '--pool', 'paper'], path.join(work, 'paper'));
    process.stderr.write('(f) REST formulation (template synthesizer), cold then warm...\n');
    const restCache = path.join(work, 'rest-cache');
    const restArgs = ['--source', birdDir, '--formulations', 'rest', '--cache-dir', restCache];
    const restCold = await generateInChild(restArgs, path.join(work, 'rest'));
    const restWarm = await generateInChild(restArgs, path.join(work, 'rest'));
    const restFigures = restDatasetFigures(path.join(work, 'rest'));
    process.stderr.write("(f2) issue 34's constructs set, every formulation, re-executed by python3 sqlite3...\n");
    const constructs = await constructsBench(work, generateInChild, root);
    process.stderr.write(
      '(f3) chain formulation (issue 36): cold rest, then cold rest,chain; re-executed by python3 sqlite3...\n',
    );
    const chain = await chainBench(work, birdDir, generateInChild, root);
    const restStats = restCold.stats.formulations.rest!;
    const differential = differentialFigures({
      coldMs: cold.wallMs,
      coldWithoutMs: coldWithout.wallMs,
      formulations: { ...cold.stats.formulations, ...restCold.stats.formulations },
      mutants,
    });
    process.stderr.write(
      '(g) REST server throughput, laned and single-pool, 8 and 32 connections, quiet and busy...\n',
    );
    const source = await loadSource(birdDir);
    const rest = await restThroughput(source.instances, new Map(source.databases.map((db) => [db.dbId, db])), {
      connections: [8, 32],
      durationSeconds: 3,
      contention: true,
    });
    process.stderr.write('(g0) REST head-of-line blocking, laned and single-pool...\n');
    const hol = await headOfLine(path.join(os.tmpdir(), 'nl2api-bench-cache'), {
      clients: 16,
      seconds: 10,
      timeoutMs: 1000,
    });
    process.stderr.write('(g1) REST bad-input sweep over every endpoint...\n');
    const sweep = await badInputSweep(path.join(work, 'rest'), birdDir);
    process.stderr.write('(g1c) types at the edge: wrong-type values over HTTP and MCP, SLOT/SEL over MCP...\n');
    const types = await typeSweeps({ rest: path.join(work, 'rest'), sequences: path.join(work, 'cold') }, birdDir, 20);
    process.stderr.write('(g1b) REST synthesis with a runaway model vs the template, one database...\n');
    const runaway = await runawaySynthesis(birdDir);
    process.stderr.write('(g2) evaluation: oracle overhead, baseline:knn, scripted provider under latency...\n');
    const evaluation = await evalBench(
      { slot: path.join(work, 'cold'), sel: path.join(work, 'cold'), rest: path.join(work, 'rest') },
      birdDir,
    );
    process.stderr.write(
      '(g2b) evaluation as models answer: native tools, renamed tools, --obfuscate, --predictions...\n',
    );
    const protocol = await protocolBench(
      { slot: path.join(work, 'cold'), sel: path.join(work, 'cold'), rest: path.join(work, 'rest') },
      birdDir,
    );
    process.stderr.write('(g3) export: every format, splits, leakage...\n');
    const exported = await exportBench(path.join(work, 'cold'), path.join(work, 'rest'), birdDir);
    process.stderr.write('(g4) MCP: every published sample replayed through the SDK client...\n');
    const mcp = [];
    for (const formulation of ['slot', 'sel', 'rest'] as const)
      mcp.push(await mcpBench(path.join(work, formulation === 'rest' ? 'rest' : 'cold'), birdDir, formulation));
    process.stderr.write('(h) queue backend (NL2API_BENCH_QUEUE=0 skips it)...\n');
    const queue = await queueBench(birdDir, work);
    process.stderr.write('(i) verifiers on large inputs...\n');
    const micro = microBench();

    const report = {
      birdDir,
      queries: base.queries,
      evaluation,
      protocol,
      export: exported,
      mcp,
      constructs,
      chain,
      baseline: { ms: Math.round(base.ms), runsMs: bases.map((b) => Math.round(b.ms)), errors: base.errors },
      cold: {
        ms: Math.round(cold.wallMs),
        runsMs: colds.map((c) => Math.round(c.wallMs)),
        ratioToBaseline: cold.wallMs / base.ms,
        target: `<= ${COLD_TARGET}x`,
        peakRssMb: cold.stats.timing.peakRssMb,
        stages: cold.stats.timing.stages,
      },
      warm: {
        ms: Math.round(warm.wallMs),
        ratioToCold: warm.wallMs / cold.wallMs,
        target: `< ${WARM_TARGET * 100}%`,
        peakRssMb: warm.stats.timing.peakRssMb,
      },
      warmFreshOutput: {
        ms: Math.round(warmFresh.wallMs),
        ratioToCold: warmFresh.wallMs / cold.wallMs,
        peakRssMb: warmFresh.stats.timing.peakRssMb,
      },
      oneQuestionChanged: {
        ms: Math.round(changed.wallMs),
        ratioToCold: changed.wallMs / cold.wallMs,
        stages: changed.stats.timing.stages,
      },
      coverage: Object.fromEntries(
        Object.entries(cold.stats.formulations).map(([f, s]) => [
          f,
          {
            total: { ...s.total, coveragePct: pct(s.total) },
            byDb: Object.fromEntries(
              Object.entries(s.byDb).map(([db, t]) => [
                db,
                { input: t.input, accepted: t.accepted, coveragePct: pct(t) },
              ]),
            ),
            topRejections: topRejections(s.total, 10),
          },
        ]),
      ),
      rest: {
        coverage: { ...restStats.total, coveragePct: pct(restStats.total) },
        byDb: Object.fromEntries(
          Object.entries(restStats.byDb).map(([db, t]) => [
            db,
            { input: t.input, accepted: t.accepted, coveragePct: pct(t) },
          ]),
        ),
        endpointsBeforeAfterDedup: restCold.stats.rest?.byDb,
        merges: restCold.stats.rest?.merges.length,
        ...restFigures,
        coldMs: Math.round(restCold.wallMs),
        coldRatioToBaseline: restCold.wallMs / base.ms,
        warmMs: Math.round(restWarm.wallMs),
        warmRatioToCold: restWarm.wallMs / restCold.wallMs,
        stages: restCold.stats.timing.stages,
      },
      restThroughput: rest,
      headOfLine: hol,
      restBadInput: sweep,
      restTypesAtTheEdge: types,
      restRunawaySynthesis: runaway,
      verifiers: micro,
      queue: queue.report,
      differential: differential.report,
      paperPoolCoverage: Object.fromEntries(
        Object.entries(paper.stats.formulations).map(([f, s]) => [f, { ...s.total, coveragePct: pct(s.total) }]),
      ),
    };

    const lines: string[] = [];
    for (const [f, s] of Object.entries(cold.stats.formulations)) {
      lines.push(`${f.toUpperCase()} coverage: ${s.total.accepted}/${s.total.input} = ${pct(s.total).toFixed(1)}%`);
      for (const [db, t] of Object.entries(s.byDb))
        lines.push(
          `  ${db.padEnd(26)} ${String(t.accepted).padStart(4)}/${String(t.input).padEnd(4)} ${pct(t).toFixed(1).padStart(5)}%`,
        );
      lines.push(
        `  top rejections: ${topRejections(s.total, 6)
          .map(([r, n]) => `${r} (${n})`)
          .join(', ')}`,
      );
    }
    const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
    lines.push(
      `baseline (gold SQL in-process, ${base.queries} queries, ${base.errors} errors; median of 3): ${fmt(base.ms)}`,
      `cold generate (median of 3: ${colds.map((c) => fmt(c.wallMs)).join(', ')}): ${fmt(cold.wallMs)}  ratio cold/baseline ${(cold.wallMs / base.ms).toFixed(1)}x (target <= ${COLD_TARGET}x: ${ok(cold.wallMs / base.ms <= COLD_TARGET)})`,
      `warm generate: ${fmt(warm.wallMs)}  warm/cold ${((100 * warm.wallMs) / cold.wallMs).toFixed(1)}% (target < ${WARM_TARGET * 100}%: ${ok(warm.wallMs / cold.wallMs < WARM_TARGET)})`,
      `warm generate, fresh output dir (items from cache, files rendered): ${fmt(warmFresh.wallMs)}  ${((100 * warmFresh.wallMs) / cold.wallMs).toFixed(1)}% of cold`,
      `one question's SQL changed: ${fmt(changed.wallMs)}  ${((100 * changed.wallMs) / cold.wallMs).toFixed(1)}% of cold; stage runs: ${Object.entries(
        changed.stats.timing.stages,
      )
        .map(([stage, m]) => `${stage} ${m.runs}`)
        .join(', ')}`,
      `peak RSS (main pipeline process; SQL workers not included): cold ${cold.stats.timing.peakRssMb} MB (target <= ${MAIN_RSS_TARGET_MB} MB: ${ok(cold.stats.timing.peakRssMb <= MAIN_RSS_TARGET_MB)}), warm ${warm.stats.timing.peakRssMb} MB`,
      `paper pool coverage: ${Object.entries(paper.stats.formulations)
        .map(([f, s]) => `${f} ${pct(s.total).toFixed(1)}%`)
        .join(', ')}`,
    );
    lines.push(...differential.lines);
    const dedup = restCold.stats.rest?.byDb ?? {};
    lines.push(
      `REST coverage (template synthesizer, no LLM): ${restStats.total.accepted}/${restStats.total.input} = ${pct(restStats.total).toFixed(1)}% of all questions (its target is on the deterministic ones: above)`,
      `  top rejections: ${
        topRejections(restStats.total, 6)
          .map(([r, n]) => `${r} (${n})`)
          .join(', ') || 'none'
      }`,
      `  endpoints per database, synthesized → after dedup → published: ${Object.entries(dedup)
        .map(([db, d]) => `${db} ${d.before}→${d.after}→${d.published}`)
        .join(', ')}`,
      `  ${restFigures.endpoints} endpoints for ${restFigures.samples} samples (${restCold.stats.rest?.merges.length ?? 0} merges); mean parameters per endpoint ${restFigures.meanParametersPerEndpoint.toFixed(2)}, per sample ${restFigures.meanArgumentsPerSample.toFixed(2)} (the paper: 1.38); operation names over 64 characters: ${restFigures.operationIdsOver64}`,
      `  parameters described with values read from their column: ${restFigures.parametersWithValues} of ${Math.round(restFigures.meanParametersPerEndpoint * restFigures.endpoints)}, ${restFigures.parametersWithEnum} declaring an enum`,
      `  telling endpoints apart (per database; target 0 each): ${restFigures.distinctness.suffixedNames} of ${restFigures.distinctness.endpoints} named like another plus _<n>, ${restFigures.distinctness.sharedDescriptions} sharing a description, ${restFigures.distinctness.sharedSummaries} sharing a summary, ${restFigures.distinctness.ambiguousParameters} with parameters described alike`,
      `  REST cold generate ${fmt(restCold.wallMs)} = ${(restCold.wallMs / base.ms).toFixed(1)}x baseline; warm rerun ${fmt(restWarm.wallMs)} = ${((100 * restWarm.wallMs) / restCold.wallMs).toFixed(1)}% of its cold run`,
    );
    lines.push(...constructsLines(constructs));
    lines.push(...chainLines(chain));
    lines.push(...restThroughputLines(rest, 3), ...headOfLineLines(hol));
    lines.push(...sweepLines(sweep));
    lines.push(...typeSweepLines(types.rest, types.sequences));
    lines.push(...runawayLines(runaway));
    lines.push(...queue.lines);
    lines.push(...evalLines(evaluation), ...protocolLines(protocol));
    lines.push(...exportLines(exported, base.ms));
    lines.push(...mcp.map(mcpLine));
    lines.push(
      `verifiers: 20000-row answer vs gold ${micro.compareMatch20kRowsMs} ms (match), ${micro.compareMismatch20kRowsMs} ms (mismatch); format check of 2000 sequences ${micro.formatCheck2000SequencesMs} ms`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    const reportFile = path.join(root, 'output', 'bench.json');
    await writeFileAtomic(reportFile, jsonText(report));
    process.stdout.write(`report: ${reportFile}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
