import path from 'node:path';
import { parseConfig } from '../config/load.js';
import { EVAL_DEFAULTS } from '../config/schema.js';
import { runEval } from '../eval/run.js';
import type { ChainStats, RunStats, Tally } from '../pipeline/stats.js';
import { recheck } from './constructs-bench.js';

/**
 * Issue 36's chain formulation on BIRD dev: a cold `generate --formulations rest,chain` against
 * a cold `--formulations rest` run just before it (the cost bar: at most 1.5x), the chains by
 * length and transform, the questions that start one, every chain re-executed by Python's
 * own sqlite3 (bench/recheck.py: the composed query, and the hops replayed one by one), and
 * the chains evaluated (`eval --formulation chain`: the oracle, the k-NN baseline).
 */

export interface ChainFigures {
  restColdMs: number;
  chainColdMs: number;
  chains: ChainStats;
  questions: Pick<Tally, 'input' | 'accepted' | 'rejectedBy'>;
  recheck: string;
  recheckOk: boolean;
  /** Per model: completion, and how many attempts were a bridge_error. */
  evaluation: { model: string; completion: number; attempts: number; bridgeErrors: number }[];
}

export async function chainBench(
  work: string,
  birdDir: string,
  generate: (args: string[], outDir: string) => Promise<{ wallMs: number; stats: RunStats }>,
  root: string,
): Promise<ChainFigures> {
  const run = (formulations: string, name: string) =>
    generate(
      ['--source', birdDir, '--formulations', formulations, '--cache-dir', path.join(work, `${name}-cache`)],
      path.join(work, name),
    );
  const rest = await run('rest', 'chain-baseline');
  const chain = await run('rest,chain', 'chain');
  const { input, accepted, rejectedBy } = chain.stats.formulations.chain!.total;
  const { line, ok } = recheck(root, birdDir, path.join(work, 'chain'));
  const evaluated = await runEval({
    ...EVAL_DEFAULTS,
    config: parseConfig({ source: birdDir, progress: 'none' }),
    dataset: path.join(work, 'chain'),
    formulation: 'chain',
    models: ['oracle', 'baseline:knn'],
    report: path.join(work, 'chain-eval'),
  });
  return {
    evaluation: evaluated.summary.models.map((m) => ({
      model: m.model,
      completion: m.completion.mean,
      attempts: m.attempts,
      bridgeErrors: m.errors.bridge_error ?? 0,
    })),
    restColdMs: Math.round(rest.wallMs),
    chainColdMs: Math.round(chain.wallMs),
    chains: chain.stats.chain!,
    questions: { input, accepted, rejectedBy },
    recheck: line,
    recheckOk: ok,
  };
}

export function chainLines(c: ChainFigures): string[] {
  const { chains } = c;
  const threeHops = chains.byHops['3'] ?? 0;
  const kinds = Object.entries(chains.byTransform).sort(([, a], [, b]) => b - a);
  return [
    `chain samples (issue 36; bars >= 1000, >= 30 % of 3 hops, >= 5 transforms): ${chains.samples} over ${Object.keys(chains.byDb).length} databases, ${threeHops} of 3 hops = ${((100 * threeHops) / Math.max(1, chains.samples)).toFixed(1)} %, ${kinds.length} transforms (${kinds.map(([k, n]) => `${k} ${n}`).join(', ')})`,
    `  by origin: ${Object.entries(chains.byOrigin ?? {})
      .map(([origin, n]) => `${origin} ${n}`)
      .join(', ')} (nested_sql: a gold statement's own subquery as hop 1)`,
    `  questions starting a chain: ${c.questions.accepted}/${c.questions.input}; per database: ${Object.entries(
      chains.byDb,
    )
      .map(([db, n]) => `${db} ${n}`)
      .join(', ')}`,
    `  cost: cold rest,chain ${(c.chainColdMs / 1000).toFixed(2)} s vs cold rest ${(c.restColdMs / 1000).toFixed(2)} s just before = ${(c.chainColdMs / c.restColdMs).toFixed(2)}x (bar <= 1.5x)`,
    `  independent re-execution (python3 sqlite3, bench/recheck.py): ${c.recheck}`,
    `  eval --formulation chain (bars: oracle 1.0, baseline:knn strictly between 0 and 1): ${c.evaluation
      .map((e) => `${e.model} ${(100 * e.completion).toFixed(1)} % of ${e.attempts} (bridge_error ${e.bridgeErrors})`)
      .join(', ')}`,
  ];
}
