import { performance } from 'node:perf_hooks';
import type { GoldResult, SlotSequence, SqlValue } from '../core/model.js';
import { slotToolSpecs } from '../runtime/slot/specs.js';
import { compareWithGold } from '../verifiers/compare.js';
import { checkFormat } from '../verifiers/format.js';

/**
 * Verifier speed on large inputs, measured here rather than asserted in tests (a loaded
 * machine must not fail a test): comparing a 20000-row answer with its gold result as a
 * multiset (a match within float tolerance, in reverse order; a genuine mismatch), and the
 * format check on repeated and copied tool lists (validators compiled once per list).
 * Each figure is the median of five runs.
 */

export interface MicroFigures {
  compareMatch20kRowsMs: number;
  compareMismatch20kRowsMs: number;
  formatCheck2000SequencesMs: number;
}

const ROWS = 20_000;
const SEQUENCES = 2000;

export function microBench(): MicroFigures {
  const gold = goldOf(rows(7));
  const shuffled = [...gold.rows].reverse().map((r) => [r[0], r[1], (r[2] as number) * (1 + 1e-8), r[3]]);
  const other = rows(8);
  const tools = slotToolSpecs(
    ['title', 'price', 'author'].map((key) => ({ key, description: key })),
    'extended',
  );
  const copy = structuredClone(tools);
  return {
    compareMatch20kRowsMs: median(() =>
      expectOk(compareWithGold([{ kind: 'table', columns: gold.columns, rows: shuffled }], gold).ok, true),
    ),
    compareMismatch20kRowsMs: median(() =>
      expectOk(compareWithGold([{ kind: 'table', columns: gold.columns, rows: other }], gold).ok, false),
    ),
    formatCheck2000SequencesMs: median(() => {
      for (let i = 0; i < SEQUENCES; i++) expectOk(checkFormat(sequence(), i % 2 ? tools : copy).ok, true);
    }),
  };
}

function rows(seed: number): SqlValue[][] {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: ROWS }, (_, i) => [i % 97, `name ${i % 500}`, rnd() * 1000, i % 7 === 0 ? null : i]);
}

function goldOf(rows: SqlValue[][]): GoldResult {
  return { columns: ['c0', 'c1', 'c2', 'c3'], rows, executedSql: 'SELECT ...', ordered: false, distinct: false };
}

function sequence(): SlotSequence {
  return {
    initialization: [
      {
        name: 'initialize_active_data',
        label: 'starting_table_var',
        arguments: { database: 'shop', tables: [{ alias: 'T1', table: 'book' }], joins: [] },
      },
    ],
    calls: [
      {
        name: 'filter_data',
        label: 'cheap',
        arguments: { data_source: '$starting_table_var$', key_name: 'price', value: 10, condition: 'less_than' },
      },
      {
        name: 'aggregate_data',
        label: 'n',
        arguments: { data_source: '$cheap$', key_name: 'title', aggregation_type: 'count' },
      },
    ],
    answerLabels: ['n'],
  };
}

/** A benchmark of a wrong answer measures nothing: stop if the verdict is not the expected one. */
function expectOk(ok: boolean, expected: boolean): void {
  if (ok !== expected) throw new Error(`micro benchmark: verdict ok=${ok}, expected ${expected}`);
}

function median(run: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return Math.round(times.sort((a, b) => a - b)[2]);
}
