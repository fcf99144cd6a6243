import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../config/load.js';
import type { ConfigInput } from '../config/schema.js';
import { generate } from '../pipeline/generate.js';
import type { RunStats } from '../pipeline/stats.js';
import { goodEndpoint, startScriptedMistral, type PromptInstance, type WireEndpoint } from './scripted-mistral.js';

/**
 * Issue 14's runaway-synthesis bar: REST generation of one BIRD dev database with a hostile
 * model — a scripted Mistral (scripted-mistral.ts) reached through the real LLM path
 * (config `llm`, LangChain's Mistral client) that proposes, for every instance and attempt, a
 * query that never ends: its gold wrapped in a count of the table crossed with itself five
 * ways, or in a recursive CTE without end. Its wall time against the template-only run of the
 * same database in the same process, each on a fresh cache (bar: at most 3x).
 */

export const RUNAWAY_DB = 'debit_card_specializing';
const RATIO_TARGET = 3;

export interface RunawayFigures {
  db: string;
  instances: number;
  templateSeconds: number;
  runawaySeconds: number;
  ratio: number;
  /** rest.synthesize's own time in each run (stats timing). */
  synthesizeSeconds: { template: number; runaway: number };
  /** The runaway run: instances accepted (by the template fallback), and the synthesis requests the model got. */
  accepted: number;
  modelRequests: number;
  /** The runaway run's synthesis rejections by category (the last check that failed). */
  rejectedBy: Record<string, number>;
}

/** The first table the gold reads. */
function firstTable(sql: string): string {
  const match = /\bFROM\s+(`[^`]+`|"[^"]+"|\[[^\]]+\]|[A-Za-z_]\w*)/i.exec(sql);
  return match ? match[1] : 'sqlite_master';
}

/** Odd attempts: the gold filtered by a five-way self cross join's count; even: by a recursive CTE that never ends. */
export function runawayEndpoint(instance: PromptInstance, attempt: number): WireEndpoint {
  const good = goodEndpoint(instance);
  const table = firstTable(good.sql);
  const sql =
    attempt % 2 === 1
      ? `SELECT t.* FROM (${good.sql}) AS t WHERE (SELECT COUNT(*) FROM ${['a', 'b', 'c', 'd', 'e'].map((alias) => `${table} AS ${alias}`).join(', ')}) >= 0`
      : `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT t.* FROM (${good.sql}) AS t WHERE (SELECT MAX(n) FROM r) > 0`;
  return { ...good, sql };
}

async function timedRun(input: ConfigInput): Promise<{ seconds: number; stats: RunStats }> {
  const started = performance.now();
  const result = await generate({ config: parseConfig(input) });
  const seconds = (performance.now() - started) / 1000;
  if (!result.stats) throw new Error('generate returned no stats');
  return { seconds, stats: result.stats };
}

const synthesisSeconds = (stats: RunStats) => (stats.timing.stages['rest.synthesize']?.ms ?? 0) / 1000;

export async function runawaySynthesis(birdDir: string, db = RUNAWAY_DB): Promise<RunawayFigures> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'nl2api-runaway-'));
  const llm = await startScriptedMistral({ endpoint: runawayEndpoint });
  const savedKey = process.env.MISTRAL_API_KEY;
  process.env.MISTRAL_API_KEY = 'scripted-runaway';
  try {
    const common = (name: string): ConfigInput => ({
      source: birdDir,
      out: path.join(work, name),
      cacheDir: path.join(work, `${name}-cache`),
      formulations: ['rest'],
      dbIds: [db],
      progress: 'none',
    });
    const template = await timedRun(common('template'));
    const runaway = await timedRun({
      ...common('runaway'),
      llm: {
        provider: 'mistral',
        model: 'runaway-scripted',
        baseUrl: llm.url,
        // The judge and the dedup agent have nothing to do: the endpoints served are the template's.
        timeoutMs: 30_000,
        // What is measured is the cost of the proposals, not the provider's request budget (60 a minute by default).
        requestsPerMinute: 1_000_000,
      },
    });
    const rest = runaway.stats.formulations.rest!.byDb[db];
    return {
      db,
      instances: rest.input,
      templateSeconds: template.seconds,
      runawaySeconds: runaway.seconds,
      ratio: runaway.seconds / template.seconds,
      synthesizeSeconds: { template: synthesisSeconds(template.stats), runaway: synthesisSeconds(runaway.stats) },
      accepted: rest.accepted,
      modelRequests: llm.of('synthesis').length,
      rejectedBy: rest.rejectedBy,
    };
  } finally {
    if (savedKey === undefined) delete process.env.MISTRAL_API_KEY;
    else process.env.MISTRAL_API_KEY = savedKey;
    await llm.close();
    rmSync(work, { recursive: true, force: true });
  }
}

export function runawayLines(f: RunawayFigures): string[] {
  const ok = f.ratio <= RATIO_TARGET ? 'ok' : 'MISSED';
  return [
    `REST synthesis with a runaway model (${f.db}, ${f.instances} questions; every proposal a 5-way self cross join or an endless recursive CTE): ` +
      `${f.runawaySeconds.toFixed(1)} s vs template-only ${f.templateSeconds.toFixed(1)} s = ${f.ratio.toFixed(2)}x (target <= ${RATIO_TARGET}x: ${ok}); ` +
      `rest.synthesize ${f.synthesizeSeconds.runaway.toFixed(1)} s vs ${f.synthesizeSeconds.template.toFixed(1)} s; ` +
      `${f.accepted} accepted, ${f.modelRequests} synthesis requests to the model`,
  ];
}

/** `node dist/bench/runaway-synthesis.js [<bird dir>] [<db>]`: this section alone. */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [birdDir = process.env.NL2API_BIRD_DIR ?? '../shared/bird-dev', db] = process.argv.slice(2);
  const figures = await runawaySynthesis(path.resolve(birdDir), db);
  process.stdout.write(`${runawayLines(figures).join('\n')}\n${JSON.stringify(figures)}\n`);
}
