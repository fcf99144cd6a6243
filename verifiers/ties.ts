import type { SqlValue, Ties } from '../core/model.js';
import { rowMatch } from './compare.js';

/**
 * Tie groups of an `ORDER BY … LIMIT` answer, from its tie probe's rows (the query without
 * LIMIT, sort keys appended: generators/sql/ties.ts), and answers checked against them.
 */

type Row = SqlValue[];

/** Above this many rows in all, tie groups are not kept (the comparison stays strict). */
const MAX_TIE_ROWS = 1000;

export interface TieReading {
  /** The groups the window's positions may take rows from; null when no rows tie, or too many to keep them. */
  ties: Ties | null;
  /** A group at the window's edge has rows on both sides of it: which ones are in the answer is arbitrary. */
  cut: boolean;
  /**
   * `cut`, and the groups cannot list the rows that may stand in the window: they were not kept
   * (too many rows, or a DISTINCT row whose sort key is unspecified), or a cut group runs past
   * the probe's bound. An answer here is one arbitrary pick that no comparison can check. A cut
   * the groups do list is not open: against them any pick of the cut group passes and any other
   * row still fails, a check worth keeping.
   */
  open: boolean;
  /** Rows that tie on the sort keys are the same row: the window's rows and their order are fixed. */
  fixed: boolean;
}

/**
 * `rows`: the probe's rows, in order, the last `keys` columns the sort keys; `complete`:
 * they are all of the query's rows (not cut short by the probe's own bound).
 */
export function readTies(
  rows: readonly Row[],
  keys: number,
  window: { limit: number; offset: number; distinct: boolean },
  complete: boolean,
): TieReading {
  if (window.distinct) {
    // Without every row (the probe was bounded) a distinct row's other keys are unknown: its
    // first occurrence is what can be read.
    if (complete && distinctOrderIsOpen(rows, keys, window)) return { ties: null, cut: true, open: true, fixed: false };
    // The distinct rows, each where it first occurs, tie on the sort keys as rows do without
    // DISTINCT: their order among themselves is SQL's to choose, and a tie across an edge of the
    // window (or one the probe's bound cuts) leaves which of them are in it open. Not `fixed`:
    // which key orders a row is unspecified.
    const placed = firstOccurrences(rows, keys).map(({ row, sortKeys }) => [...row, ...sortKeys]);
    const { ties, cut, open } = readTies(placed, keys, { ...window, distinct: false }, complete);
    return { ties, cut, open, fixed: false };
  }
  const end = Math.min(rows.length, window.offset + window.limit);
  if (end <= window.offset) return { ties: { groups: [], positions: [] }, cut: false, open: false, fixed: true };
  const width = rows[0].length - keys;
  const keyOf = (row: Row) => JSON.stringify(row.slice(width));
  const groups: Row[][] = [];
  const positions: number[] = [];
  let cut = false;
  // A cut group that reaches the end of a probe stopped by its bound: its other rows are unseen.
  let cutUnseen = false;
  let p = window.offset;
  while (p < end) {
    const key = keyOf(rows[p]);
    let first = p;
    while (first > 0 && keyOf(rows[first - 1]) === key) first--;
    let last = p + 1;
    while (last < rows.length && keyOf(rows[last]) === key) last++;
    const group = rows.slice(first, last).map((row) => row.slice(0, width));
    const unfinished = last === rows.length && !complete;
    const spills = first < window.offset || last > end || unfinished;
    if (spills && group.some((row) => rowMatch(row, group[0]) === false)) {
      cut = true;
      cutUnseen ||= unfinished;
    }
    for (; p < Math.min(last, end); p++) positions.push(groups.length);
    groups.push(group);
  }
  // Only groups of two rows or more let rows stand in for each other.
  const kept = groups.some((g) => g.length > 1) && groups.reduce((n, g) => n + g.length, 0) <= MAX_TIE_ROWS;
  const fixed = !cut && groups.every((group) => group.every((row) => JSON.stringify(row) === JSON.stringify(group[0])));
  return { ties: kept ? { groups, positions } : null, cut, open: cut && (!kept || cutUnseen), fixed };
}

/**
 * The answer is one the ordered, limited query may give: at each position a row of that
 * position's tie group, each group's rows used at most as often as the group has them.
 */
export function matchesTies(answer: readonly Row[], ties: Ties): boolean {
  if (answer.length !== ties.positions.length) return false;
  const available = ties.groups.map((group) => group.map(() => true));
  return answer.every((row, i) => {
    const group = ties.positions[i];
    const k = ties.groups[group].findIndex((candidate, j) => available[group][j] && rowMatch(candidate, row) !== false);
    if (k < 0) return false;
    available[group][k] = false;
    return true;
  });
}

/**
 * SELECT DISTINCT … ORDER BY a key that varies among the rows of one distinct row: SQLite
 * orders that row by one of them, unspecified. The two extremes — every distinct row placed
 * at its first and at its last occurrence in key order — give the same window when the
 * choice cannot matter.
 */
function distinctOrderIsOpen(rows: readonly Row[], keys: number, window: { limit: number; offset: number }): boolean {
  const inWindow = (placed: Placed[]) => placed.slice(window.offset, window.offset + window.limit).map((p) => p.row);
  const first = inWindow(firstOccurrences(rows, keys));
  const last = inWindow(firstOccurrences([...rows].reverse(), keys).reverse());
  return first.length !== last.length || first.some((row, i) => rowMatch(row, last[i]) === false);
}

interface Placed {
  row: Row;
  sortKeys: Row;
}

/** Each distinct row (the probe's columns but its last `keys`) where it first occurs in `rows`, with the sort keys there. */
function firstOccurrences(rows: readonly Row[], keys: number): Placed[] {
  const width = (rows[0]?.length ?? keys) - keys;
  const seen = new Set<string>();
  const placed: Placed[] = [];
  for (const row of rows) {
    const projected = row.slice(0, width);
    const id = JSON.stringify(projected);
    if (seen.has(id)) continue;
    seen.add(id);
    placed.push({ row: projected, sortKeys: row.slice(width) });
  }
  return placed;
}
