import type { GoldOnVariant, GoldResult, GoldStrength, SqlValue, Ties, ToolOutput, Verdict } from '../core/model.js';
import { perObject } from '../core/per-object.js';
import { answerRows, compareWithGold } from './compare.js';
import { matchesTies } from './ties.js';

/**
 * Differential verification: an answer that equals the gold's on one database state may do
 * so by coincidence (a wrong filter that happens to remove nothing, a tie broken by the
 * physical row order). The gold SQL and the sample are therefore also run on variants of
 * the database (pipeline/variants/): the same rows read in another order, and copies whose
 * values are permuted. These are the verdicts over those answers, as pure functions.
 */

type Rows = SqlValue[][];

/** `rows` in the place of the gold's answer: same columns, same ordering and distinctness rules. */
function asGold(gold: GoldResult, rows: Rows): GoldResult {
  return { ...gold, rows };
}

/** Two answers of the gold SQL agree under the comparison rules (compare.ts). */
export function sameAnswer(gold: GoldResult, a: Rows, b: Rows): boolean {
  return compareWithGold([{ kind: 'table', columns: gold.columns, rows: a }], asGold(gold, b)).ok;
}

/** The answers that differ from each other, the first one first. */
export function distinctAnswers(gold: GoldResult, answers: readonly Rows[]): Rows[] {
  const kept: Rows[] = [];
  for (const answer of answers) if (!kept.some((k) => sameAnswer(gold, k, answer))) kept.push(answer);
  return kept;
}

/**
 * The outputs against each acceptable answer, then against the tie groups of an ordered,
 * limited answer (rows tied on the sort keys may stand in for each other): the first
 * verdict that accepts, else the verdict against the first answer (the one a reader expects).
 */
export function compareWithAnswers(
  outputs: ToolOutput[],
  gold: GoldResult,
  answers: readonly Rows[],
  ties: Ties | undefined,
): Verdict {
  const first = compareWithGold(outputs, asGold(gold, answers[0] ?? gold.rows));
  if (first.ok) return first;
  for (const rows of answers.slice(1)) {
    const verdict = compareWithGold(outputs, asGold(gold, rows));
    if (verdict.ok) return { ...verdict, message: `${verdict.message}, one of ${answers.length} acceptable answers` };
  }
  const rows = answerRows(outputs);
  if (ties && Array.isArray(rows) && rows[0]?.length === gold.columns.length && matchesTies(rows, ties)) {
    return { ok: true, category: 'ties', message: `${rows.length} rows, equal up to rows tied on the sort keys` };
  }
  return first;
}

/**
 * Whether a list of values could be accepted as a one-column gold's answer: only by an
 * acceptable answer (or the tie groups' window) of its height that holds each of its values
 * that are not numbers (a text or NULL matches only itself; numbers may match within the
 * tolerance, so they are not looked at). A caller comparing many candidates skips the others
 * unread; true says nothing, the comparison decides.
 */
export function listMayMatch(values: readonly SqlValue[], column: GoldResult): boolean {
  if (column.columns.length !== 1) return true;
  const { heights, answers } = exactValuesOf(column);
  return (
    heights.has(values.length) &&
    answers.some((exact) => values.every((value) => typeof value === 'number' || exact.has(value)))
  );
}

/** A one-column gold's accepted heights and, per acceptable answer (and the tie groups), its values that are not numbers: once per gold. */
const exactValuesOf = perObject((column: GoldResult) => {
  const answers = (column.acceptable ?? [column.rows]).map((rows) => rows.map((row) => row[0]));
  const heights = new Set(answers.map((answer) => answer.length));
  if (column.ties) {
    answers.push(column.ties.groups.flat().map((row) => row[0]));
    heights.add(column.ties.positions.length);
  }
  return { heights, answers: answers.map((answer) => new Set(answer.filter((value) => typeof value !== 'number'))) };
});

/** The semantic comparison: any acceptable answer of a nondeterministic gold that was kept, rows tied on the sort keys interchangeable. */
export function compareWithAcceptable(outputs: ToolOutput[], gold: GoldResult): Verdict {
  return compareWithAnswers(outputs, gold, gold.acceptable ?? [gold.rows], gold.ties);
}

/**
 * The variants whose gold answer means something: not those where its LIMIT window is open
 * (`GoldOnVariant.open`), where the answer is one arbitrary pick among others.
 */
export function decidingVariants(variants: readonly GoldOnVariant[]): GoldOnVariant[] {
  return variants.filter((variant) => !variant.open);
}

/**
 * What agreeing with the gold proves: nothing much when it is empty or one row of zeros
 * and NULLs (any filter that selects nothing gives it); more when the answer moves with
 * the data (`discriminating`). Without value-perturbed variants, only the first two can be
 * told; nor on one where the gold's window is open: an arbitrary pick that differs from the
 * gold's answer is no sign that the answer moves with the data, nor one that equals it that
 * it does not.
 */
export function goldStrength(gold: GoldResult, perturbed: readonly GoldOnVariant[]): GoldStrength | undefined {
  if (gold.rows.length === 0) return 'empty';
  if (gold.rows.length === 1 && gold.rows[0].every((value) => value === null || value === 0)) return 'trivial';
  const deciding = decidingVariants(perturbed);
  if (deciding.length === 0) return undefined;
  const moved = deciding.some((variant) => !variant.answers.some((answer) => sameAnswer(gold, answer, gold.rows)));
  return moved ? 'discriminating' : 'insensitive';
}

/** What a sample gave on one variant: its answer outputs, or why it gave none. */
export type VariantRun = { variant: string; outputs: ToolOutput[] } | { variant: string; error: string };

/**
 * The sample agrees with the gold on every variant the gold was run on: on each, its answer
 * is one of the gold's acceptable answers there. The first disagreement rejects it as
 * `differential:<variant>`, with both answers in the message.
 * A variant where the gold's LIMIT window is open (`GoldOnVariant.open`) is not compared: the
 * gold's answer there is one arbitrary pick, and a correct sample may pick otherwise. The
 * sample failing there still rejects it: an open window excuses another pick, not an error.
 * When no variant is compared, the verdict says so (`differential:open`), not that it agrees.
 */
export function checkDifferential(gold: GoldResult, runs: readonly VariantRun[]): Verdict {
  const expected = new Map((gold.variants ?? []).map((v) => [v.variant, v]));
  const compared: string[] = [];
  const open: string[] = [];
  for (const run of runs) {
    const onVariant = expected.get(run.variant);
    if (!onVariant) continue;
    const { answers, ties } = onVariant;
    const category = `differential:${run.variant}`;
    const gave = `the gold SQL answers ${showRows(answers[0])}`;
    if ('error' in run) return { ok: false, category, message: `the sample fails there (${run.error}); ${gave}` };
    if (onVariant.open) {
      open.push(run.variant);
      continue;
    }
    compared.push(run.variant);
    const verdict = compareWithAnswers(run.outputs, gold, answers, ties);
    if (!verdict.ok) {
      const rows = answerRows(run.outputs);
      const sample = Array.isArray(rows) ? showRows(rows) : 'no answer';
      return {
        ok: false,
        category,
        message: `${verdict.category} (${verdict.message}): ${gave}, the sample ${sample}`,
      };
    }
  }
  const notCompared = `the gold's LIMIT window is open on ${open.join(', ')}: which rows it keeps there is arbitrary`;
  if (compared.length > 0) {
    const agrees = `agrees with the gold on ${compared.join(', ')}`;
    return {
      ok: true,
      category: 'differential:agrees',
      message: open.length > 0 ? `${agrees}; ${notCompared}` : agrees,
    };
  }
  return open.length > 0
    ? { ok: true, category: 'differential:open', message: `not compared on any variant: ${notCompared}` }
    : { ok: true, category: 'differential:none', message: 'no database variants configured' };
}

/** Rows as JSON for a message, cut at 200 characters. */
export function showRows(rows: Rows): string {
  const text = JSON.stringify(rows);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
