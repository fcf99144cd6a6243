import type { GoldOnVariant, GoldResult, SqlValue } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { SqlExecutionError, SqlTimeoutError, type SqlExecutor } from '../../runtime/sql/executor.js';
import { decidingVariants, distinctAnswers, goldStrength, sameAnswer, showRows } from '../../verifiers/differential.js';
import { matchesTies, readTies, type TieReading } from '../../verifiers/ties.js';
import { tieProbe, type TieProbe } from '../../generators/sql/ties.js';
import type { StageContext } from '../stage.js';
import { onVariant, VariantBuildError, variantsOf, type Variant } from '../variants.js';
import { lazy } from '../../core/lazy.js';

// With the SQL parser: loaded by the first gold that runs on variants, not with the module
// (one import: two loading it at once trip jest's ESM loader).
const rowOrder = lazy(() => import('../../generators/sql/row-order.js'));

/**
 * The gold SQL on the run's database variants (pipeline/variants.ts), after it ran on the
 * database itself: what a sample must also answer there, and what the gold is worth.
 * - On the `reordered` variant (the same rows read in another order) the gold must answer
 *   the same, and its LIMIT must not cut through rows tied on the sort keys (its tie probe on
 *   the database itself): otherwise its answer depends on the physical row order and it is
 *   `gold:nondeterministic`, or, with `verification.nondeterministicGold: accept`, kept with
 *   the answers it gave and its tie groups, all acceptable (on each perturbed variant, the
 *   answers of both scan orders: a sample reads the rows in an order of its own).
 * - On each value-perturbed variant, an `ORDER BY … LIMIT` answer also gets its tie groups
 *   there (generators/sql/ties.ts), so a tie that the permutation creates does not hold a
 *   sample to one arbitrary tie-break. Where the permutation opens the window in a way the
 *   groups cannot list (verifiers/ties.ts, `open`), the variant is marked `open`: the gold's
 *   answer there is SQLite's arbitrary pick, so it decides neither a sample's agreement nor
 *   the gold's strength. Not a reason to call the gold nondeterministic: on the database
 *   itself, the one its question is about, its answer is settled.
 * - Its strength (verifiers/differential.ts) is recorded; `weakGold: drop` rejects what
 *   does not discriminate.
 */
export async function goldOnVariants(gold: GoldResult, ctx: StageContext): Promise<Outcome<GoldResult>> {
  const { verification } = ctx.config;
  const variants = variantsOf(verification);
  if (variants.length === 0) return accept(gold);
  const probe = gold.ordered ? tieProbe(gold.executedSql) : null;
  const own = probe ? await tiesOn(gold.rows, probe, ctx.executor, ctx) : null;
  const onVariants: GoldOnVariant[] = [];
  const dependence = (await rowOrder()).rowOrderDependence(gold.executedSql, ctx.db);
  const inAnyOrder = dependence.compared === 'none';
  for (const variant of variants) {
    // The same rows in another order: an answer that provably ignores row order is the same there.
    const answer = variant.seed === null && inAnyOrder ? gold.rows : await answerOn(gold, variant, ctx);
    if (!Array.isArray(answer)) return answer;
    const there = onVariant(ctx, variant).executor;
    const tied = probe && variant.seed !== null ? await tiesOn(answer, probe, there, ctx) : null;
    onVariants.push({
      variant: variant.name,
      answers: [answer],
      ...(tied?.ties ? { ties: tied.ties } : {}),
      ...(tied?.open ? { open: true as const } : {}),
    });
  }
  const [reordered, ...perturbed] = onVariants;
  let acceptable: SqlValue[][][] | undefined;
  const reorderedDiffers = !sameAnswer(gold, reordered.answers[0], gold.rows);
  if (reorderedDiffers || own?.cut) {
    if (verification.nondeterministicGold === 'reject') {
      return reject(
        'nondeterministic',
        reorderedDiffers
          ? `the answer depends on the physical row order: ${showRows(gold.rows)} as stored, ${showRows(reordered.answers[0])} with the same rows read in another order`
          : `which rows LIMIT keeps depends on an order SQL leaves open (rows tied on the sort keys, or a DISTINCT row whose sort key varies): other rows may stand in for some of ${showRows(gold.rows)}`,
      );
    }
    acceptable = distinctAnswers(gold, [gold.rows, reordered.answers[0]]);
    // Kept with every answer it gave: on a perturbed variant too, both scan orders' answers.
    for (const [i, variant] of variants.entries()) {
      if (variant.seed === null) continue;
      const other = await answerOn(gold, { ...variant, reverseScans: !variant.reverseScans }, ctx);
      if (!Array.isArray(other)) return other;
      onVariants[i] = { ...onVariants[i], answers: distinctAnswers(gold, [...onVariants[i].answers, other]) };
    }
  }
  const strength = goldStrength(gold, perturbed);
  if (verification.weakGold === 'drop' && strength !== undefined && strength !== 'discriminating') {
    return reject(`weak:${strength}`, weakness(strength, perturbed));
  }
  return accept({
    ...gold,
    variants: onVariants,
    ...(strength ? { strength } : {}),
    ...(acceptable ? { acceptable } : {}),
    ...(own?.ties ? { ties: own.ties } : {}),
    ...(dependence.exact === 'none' || (dependence.exact === 'ordering' && own?.fixed)
      ? { fixedAnswer: true as const }
      : {}),
  });
}

/** Rows past the LIMIT window a tie probe reads, to find where the window's last tie group ends. */
const TIE_PROBE_EXTRA_ROWS = 1000;

/**
 * Rows a DISTINCT query's probe reads: all of them, within reason. A distinct row ordered by a
 * key it does not select is ordered by one of its rows' keys, which one unspecified; whether
 * that can move it into or out of the window shows only with every row of it (verifiers/ties.ts,
 * distinctOrderIsOpen), and its other rows may lie anywhere past the window (on inflated data,
 * copies of each row fill a short probe before any other key of it appears).
 */
const DISTINCT_PROBE_ROWS = 100_000;

/** How many rows a tie probe reads: past this many, its reading is of an incomplete probe. */
function probeBound(probe: TieProbe, answerRows: number): number {
  // A query without LIMIT: its probe has the answer's rows (one more tells it is complete).
  if (!Number.isFinite(probe.limit)) return answerRows + 1;
  const window = probe.offset + probe.limit + TIE_PROBE_EXTRA_ROWS;
  return probe.distinct ? Math.max(DISTINCT_PROBE_ROWS, window) : window;
}

/**
 * The tie groups of the gold's window on one database state, or null when the probe cannot
 * tell (it fails or runs past the timeout there: the comparison stays strict). A probe whose
 * groups do not hold the gold's own answer there is not faithful to the query: not used.
 */
async function tiesOn(
  answer: SqlValue[][],
  probe: TieProbe,
  executor: SqlExecutor,
  ctx: StageContext,
): Promise<TieReading | null> {
  const bound = probeBound(probe, answer.length);
  let rows: SqlValue[][];
  try {
    const sql = `${probe.sql} LIMIT ${bound}`;
    rows = (await executor.run({ dbPath: ctx.db.path, sql, params: [], timeoutMs: ctx.config.goldTimeoutMs })).rows;
  } catch (error) {
    if (error instanceof SqlExecutionError || error instanceof SqlTimeoutError) return null;
    throw error;
  }
  const reading = readTies(rows, probe.keys, probe, rows.length < bound);
  return reading.ties && !matchesTies(answer, reading.ties) ? null : reading;
}

/** The gold's rows on one reading of a variant, or its rejection there. */
async function answerOn(gold: GoldResult, variant: Variant, ctx: StageContext): Promise<SqlValue[][] | Outcome<never>> {
  const there = onVariant(ctx, variant);
  try {
    const result = await there.executor.run({
      dbPath: ctx.db.path,
      sql: gold.executedSql,
      params: [],
      timeoutMs: ctx.config.goldTimeoutMs,
    });
    return result.rows;
  } catch (error) {
    if (error instanceof SqlTimeoutError)
      return reject('gold_timeout', `on the ${variant.name} variant: ${error.message}`);
    // It ran on the database itself: a refusal on a variant with the same schema is ours.
    if (error instanceof SqlExecutionError)
      throw new VariantBuildError(`the gold SQL fails on the ${variant.name} variant: ${error.message}`);
    throw error;
  }
}

function weakness(strength: string, perturbed: readonly GoldOnVariant[]): string {
  switch (strength) {
    case 'empty':
      return 'the gold answer is empty: any query that selects nothing agrees with it';
    case 'trivial':
      return 'the gold answer is one row of zeros and NULLs: a query that selects nothing gives it too';
    default: {
      const deciding = decidingVariants(perturbed).length;
      const open = perturbed.length - deciding;
      const where = open > 0 ? ` where its LIMIT window is settled (${open} more leave it open)` : '';
      return `the gold answer is the same on all ${deciding} value-perturbed variant(s)${where}: agreement cannot tell a right query from a wrong one`;
    }
  }
}
