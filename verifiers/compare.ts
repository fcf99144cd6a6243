import { perObject } from '../core/per-object.js';
import type { GoldResult, SqlValue, ToolOutput, Verdict } from '../core/model.js';

/**
 * Result comparison: is the answer of a tool sequence the gold SQL result?
 *
 * Rules (docs/TOOLS.md, "Output kinds"):
 * - The answer outputs are zipped column-wise into rows (`answerRows`).
 * - Column names are ignored; column order matters (as in execution accuracy).
 * - Row order matters iff `gold.ordered` (top-level ORDER BY); otherwise rows compare as
 *   multisets: duplicates count. When `gold.distinct`, the comparison is reported as a set
 *   comparison, but it is the same multiset check: gold has no duplicate rows, the row counts
 *   must already be equal, so an answer with duplicates cannot match a distinct gold as a
 *   multiset nor as a set of the same size.
 * - Numbers are equal within relative 1e-6 or absolute 1e-9 (an INTEGER 3 is the REAL 3.0);
 *   NULL equals NULL; strings compare exactly; a number never equals a string.
 * - A scalar, a one-element list and a 1x1 table are the same answer.
 *
 * On success the category names the deciding rule, most specific first:
 * `float_tolerance` (some number matched only within tolerance), `scalar` (1x1),
 * `ordered` (ordered gold, rows equal in order), `exact` (unordered gold, rows equal as
 * given), `multiset` / `set` (equal after reordering).
 * On failure: `semantic:shape`, `semantic:column_count`, `semantic:row_count`,
 * `semantic:order` (same multiset, wrong order), `semantic:value_mismatch`.
 */

const REL_TOLERANCE = 1e-6;
const ABS_TOLERANCE = 1e-9;
/** Significant digits of numbers in multiset sort keys (coarser than any exact difference we care about). */
const KEY_DIGITS = 9;
/** Above this many leftover pairs after the sorted merge, skip the quadratic tolerant matching. */
const MAX_LEFTOVER_PAIRS = 1_000_000;

type Row = SqlValue[];

function verdict(ok: boolean, category: string, message: string): Verdict {
  return { ok, category, message };
}

/** The columns one output contributes to the answer, each as a list of values. */
function outputColumns(output: ToolOutput): SqlValue[][] {
  switch (output.kind) {
    case 'scalar':
      return [[output.value]];
    case 'list':
      return [output.values];
    case 'table':
      return output.columns.map((_, c) => output.rows.map((row) => row[c] ?? null));
  }
}

/**
 * Zips answer outputs column-wise into rows: a scalar is one row, a list one row per value,
 * a table contributes all its columns. All columns must have the same length.
 */
export function answerRows(outputs: ToolOutput[]): SqlValue[][] | Verdict {
  if (outputs.length === 0) return verdict(false, 'semantic:shape', 'no answer outputs');
  const columns: SqlValue[][] = [];
  const lengths: string[] = [];
  for (const [i, output] of outputs.entries()) {
    const cols = outputColumns(output);
    const length = output.kind === 'table' ? output.rows.length : cols[0].length;
    lengths.push(`#${i} ${output.kind}: ${length}`);
    columns.push(...cols);
  }
  if (columns.length === 0) return verdict(false, 'semantic:shape', 'the answer has no columns');
  const height = columns[0].length;
  if (columns.some((col) => col.length !== height)) {
    return verdict(false, 'semantic:shape', `answer outputs differ in length (${lengths.join(', ')})`);
  }
  const rows: SqlValue[][] = [];
  for (let r = 0; r < height; r++) rows.push(columns.map((col) => col[r]));
  return rows;
}

/** 'exact' when identical, 'tolerance' when equal only within float tolerance, else false. */
function valueMatch(a: SqlValue, b: SqlValue): 'exact' | 'tolerance' | false {
  if (a === b) return 'exact';
  if (typeof a !== 'number' || typeof b !== 'number') return false;
  const diff = Math.abs(a - b);
  if (diff <= ABS_TOLERANCE || diff <= REL_TOLERANCE * Math.max(Math.abs(a), Math.abs(b))) return 'tolerance';
  return false;
}

export function rowMatch(a: Row, b: Row): 'exact' | 'tolerance' | false {
  let result: 'exact' | 'tolerance' = 'exact';
  for (let c = 0; c < a.length; c++) {
    const m = valueMatch(a[c], b[c]);
    if (m === false) return false;
    if (m === 'tolerance') result = 'tolerance';
  }
  return result;
}

function show(row: Row): string {
  const text = JSON.stringify(row);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

function valueKey(value: SqlValue, digits: number | null): string {
  if (value === null) return 'n';
  if (typeof value === 'string') return `s${JSON.stringify(value)}`;
  return `f${digits === null ? String(value) : String(Number(value.toPrecision(digits)))}`;
}

interface Keyed {
  row: Row;
  /** Numbers rounded: rows equal within tolerance (almost always) share it. */
  coarse: string;
  /** Full precision: orders rows that share a coarse key so that identical rows align. */
  fine: string;
}

/** A row's values' keys, joined: numbers rounded to `digits` significant digits, or at full precision (null). */
function rowKey(row: Row, digits: number | null): string {
  return row.map((v) => valueKey(v, digits)).join('\u0001');
}

function keyed(rows: Row[]): Keyed[] {
  const out = rows.map((row) => ({ row, coarse: rowKey(row, KEY_DIGITS), fine: rowKey(row, null) }));
  return out.sort(compareKeyed);
}

function compareKeyed(a: Keyed, b: Keyed): number {
  if (a.coarse !== b.coarse) return a.coarse < b.coarse ? -1 : 1;
  if (a.fine !== b.fine) return a.fine < b.fine ? -1 : 1;
  return 0;
}

type MultisetResult = { equal: true; tolerance: boolean } | { equal: false; missing: Row; extra: Row };

/**
 * Multiset equality with float tolerance. Rows equal exactly are paired first, by their full
 * key, in O(n): nearly every row of a matching answer. What is left (the rows of a wrong
 * answer, and tolerance-equal pairs) goes to `tolerantMatch`. The gold's rows by key are kept
 * with its rows array: a gold is compared with many answers (each formulation's, on each
 * database variant), and on large answers building the keys was most of a comparison.
 */
function multisetEqual(answer: Row[], gold: Row[]): MultisetResult {
  const goldByKey = rowsByKeyOf(gold);
  const answerByKey = rowsByKey(answer);
  const leftA = surplus(answerByKey, goldByKey);
  const leftG = surplus(goldByKey, answerByKey);
  if (leftA.length === 0 && leftG.length === 0) return { equal: true, tolerance: false };
  return tolerantMatch(leftA, leftG);
}

/** Rows by their full-precision key: rows with one key are identical. */
function rowsByKey(rows: Row[]): Map<string, Row[]> {
  const byKey = new Map<string, Row[]>();
  for (const row of rows) {
    const key = rowKey(row, null);
    const same = byKey.get(key);
    if (same) same.push(row);
    else byKey.set(key, [row]);
  }
  return byKey;
}

/** A gold's rows by key, once per rows array: a gold is compared with many answers. */
const rowsByKeyOf = perObject(rowsByKey);

/** The rows of `these` that `those` has fewer copies of. */
function surplus(these: Map<string, Row[]>, those: Map<string, Row[]>): Row[] {
  const left: Row[] = [];
  for (const [key, rows] of these) {
    const matched = those.get(key)?.length ?? 0;
    for (let i = matched; i < rows.length; i++) left.push(rows[i]);
  }
  return left;
}

/**
 * Multiset equality with float tolerance, for the rows exact keys did not pair, in
 * O(n log n): sort both sides by canonical keys and merge; rows left over (a tolerance-equal
 * pair whose rounded keys straddle a rounding boundary) are then matched pairwise.
 */
function tolerantMatch(answer: Row[], gold: Row[]): MultisetResult {
  const a = keyed(answer);
  const g = keyed(gold);
  let tolerance = false;
  const leftA: Row[] = [];
  const leftG: Row[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < g.length) {
    const m = rowMatch(a[i].row, g[j].row);
    if (m !== false) {
      if (m === 'tolerance') tolerance = true;
      i++;
      j++;
    } else if (compareKeyed(a[i], g[j]) <= 0) {
      leftA.push(a[i++].row);
    } else {
      leftG.push(g[j++].row);
    }
  }
  while (i < a.length) leftA.push(a[i++].row);
  while (j < g.length) leftG.push(g[j++].row);
  if (leftG.length === 0 && leftA.length === 0) return { equal: true, tolerance };
  // Both sides have the same number of rows, so the same number is left over on each.
  if (leftG.length * leftA.length > MAX_LEFTOVER_PAIRS) return { equal: false, missing: leftG[0], extra: leftA[0] };
  const used = new Array<boolean>(leftA.length).fill(false);
  for (const goldRow of leftG) {
    const k = used.findIndex((u, idx) => !u && rowMatch(leftA[idx], goldRow) !== false);
    if (k < 0) return { equal: false, missing: goldRow, extra: leftA[used.findIndex((u) => !u)] };
    used[k] = true;
    tolerance = true;
  }
  return { equal: true, tolerance };
}

/** Compares rows in order; the index of the first differing row, or -1, and whether tolerance was needed. */
function orderedEqual(answer: Row[], gold: Row[]): { firstDiff: number; tolerance: boolean } {
  let tolerance = false;
  for (let r = 0; r < gold.length; r++) {
    const m = rowMatch(answer[r], gold[r]);
    if (m === false) return { firstDiff: r, tolerance };
    if (m === 'tolerance') tolerance = true;
  }
  return { firstDiff: -1, tolerance };
}

export function compareWithGold(outputs: ToolOutput[], gold: GoldResult): Verdict {
  const answer = answerRows(outputs);
  if (!Array.isArray(answer)) return answer;
  const answerWidth = outputs.reduce((n, o) => n + (o.kind === 'table' ? o.columns.length : 1), 0);
  const goldWidth = gold.columns.length;
  if (answerWidth !== goldWidth) {
    return verdict(false, 'semantic:column_count', `expected ${goldWidth} columns, got ${answerWidth}`);
  }
  if (answer.length !== gold.rows.length) {
    return verdict(false, 'semantic:row_count', `expected ${gold.rows.length} rows, got ${answer.length}`);
  }
  const size = `${gold.rows.length}x${goldWidth}`;
  const inOrder = orderedEqual(answer, gold.rows);
  const success = (rule: string, tolerance: boolean): Verdict =>
    tolerance
      ? verdict(true, 'float_tolerance', `${size} equal within float tolerance (${rule})`)
      : verdict(true, rule, `${size} equal (${rule})`);

  if (inOrder.firstDiff < 0) {
    const rule = gold.rows.length === 1 && goldWidth === 1 ? 'scalar' : gold.ordered ? 'ordered' : 'exact';
    return success(rule, inOrder.tolerance);
  }
  const asMultiset = multisetEqual(answer, gold.rows);
  if (gold.ordered) {
    const r = inOrder.firstDiff;
    const diff = `row ${r}: expected ${show(gold.rows[r])}, got ${show(answer[r])}`;
    return asMultiset.equal
      ? verdict(false, 'semantic:order', `same rows, wrong order; ${diff}`)
      : verdict(false, 'semantic:value_mismatch', diff);
  }
  if (asMultiset.equal) return success(gold.distinct ? 'set' : 'multiset', asMultiset.tolerance);
  return verdict(
    false,
    'semantic:value_mismatch',
    `gold row ${show(asMultiset.missing)} not in the answer; answer row ${show(asMultiset.extra)} not in gold`,
  );
}
