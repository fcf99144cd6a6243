import type { EvalItem } from '../../eval/dataset.js';
import { liveApiBenchDialect, VAKRA } from '../../export/published/dialects.js';
import { columnReading, pandasReading } from '../../export/published/pandas-reading.js';
import {
  createDb,
  createTestDb,
  INIT_JOIN,
  innerJoinInit,
  prng,
  int,
  tableInit,
  type TestDb,
} from '../runtime/helpers.js';
import type { SqlValue, ToolCall } from '../../core/model.js';

const context = (t: TestDb, pandas: '2.2' | '1.5' = '2.2') => ({
  db: t.info,
  executor: t.executor,
  pool: 'extended' as const,
  timeoutMs: 5_000,
  pandas,
});

/** A SLOT item over `init` whose answer is the listed retrievals, with `rows` as its gold. */
function item(init: ToolCall, calls: ToolCall[], answerLabels: string[], rows: SqlValue[][]): EvalItem {
  return {
    initialization: [init],
    goldCalls: calls,
    gold: { rows },
    published: { answer_labels: answerLabels },
  } as unknown as EvalItem;
}

describe("how the Live API-Bench runtime's pandas reads a sample's data", () => {
  test('a column read back through CSV: NULLs or fractions make floats, digit text makes numbers', () => {
    const counts = { nulls: 0, fractions: 0, text: 0, integerText: 0 };
    expect(columnReading(counts, 'integer')).toEqual({ floats: false, comparedAsNumbers: true });
    expect(columnReading({ ...counts, nulls: 1 }, 'integer')).toEqual({ floats: true, comparedAsNumbers: true });
    expect(columnReading({ ...counts, fractions: 3 }, 'real')).toEqual({ floats: true, comparedAsNumbers: true });
    expect(columnReading({ ...counts, text: 4, integerText: 4 }, 'text')).toEqual({
      floats: false,
      comparedAsNumbers: true,
    });
    // One word among the digits keeps the column text; digit text in a column of no affinity
    // is compared as text by SQLite, so its filters keep their text.
    expect(columnReading({ ...counts, text: 4, integerText: 3 }, 'text').comparedAsNumbers).toBe(false);
    expect(columnReading({ ...counts, text: 4, integerText: 4 }, 'blob').comparedAsNumbers).toBe(false);
    expect(columnReading(counts, 'blob').comparedAsNumbers).toBe(false);
  });

  test("each starting key's reading comes from its table's data", async () => {
    const t = createDb({
      shop: {
        columns: [
          ['id', 'INTEGER'],
          ['stock', 'INTEGER'],
          ['month', 'TEXT'],
          ['zip', 'TEXT'],
          ['name', 'TEXT'],
        ],
        rows: [
          [1, 5, '201301', '0613', 'a'],
          [2, null, '201302', '9021', 'b'],
        ],
      },
    });
    try {
      const init = tableInit('shop');
      const reading = await pandasReading(item(init, [], [], [[1]]), context(t));
      expect(reading.columns).toEqual({
        shop_id: { floats: false, comparedAsNumbers: true },
        shop_stock: { floats: true, comparedAsNumbers: true },
        shop_month: { floats: false, comparedAsNumbers: true },
        // Leading zeros are digits too: pandas reads 0613 as 613.
        shop_zip: { floats: false, comparedAsNumbers: true },
        shop_name: { floats: false, comparedAsNumbers: false },
      });
      expect(reading.joinOrderRows).toBeUndefined();
    } finally {
      await t.cleanup();
    }
  });

  test('an answer of several columns comes in join order (each table in rowid order), whatever the planner nests', async () => {
    const rand = prng(7);
    for (let seed = 1; seed <= 12; seed++) {
      const t = createTestDb(seed, int(rand, 8, 40));
      // An index on item's joined column invites the planner to loop over tag first.
      t.raw.exec('CREATE INDEX item_id ON item(id)');
      try {
        const calls: ToolCall[] = [
          {
            name: 'filter_data',
            label: 'FILTER_1',
            arguments: {
              data_source: '$starting_table_var$',
              key_name: 'tag_weight',
              condition: 'greater_than',
              value: 2,
            },
          },
          { name: 'retrieve_data', label: 'NAMES', arguments: { data_source: '$FILTER_1$', key_name: 'item_name' } },
          { name: 'retrieve_data', label: 'LABELS', arguments: { data_source: '$FILTER_1$', key_name: 'tag_label' } },
        ];
        const expected = t.raw
          .prepare(
            'SELECT T1.name, T2.label FROM item AS T1 JOIN tag AS T2 ON T1.id = T2.item_id WHERE T2.weight > 2 ORDER BY T1.rowid, T2.rowid',
          )
          .raw()
          .all() as SqlValue[][];
        const shuffled = [...expected].reverse();
        const reading = await pandasReading(item(INIT_JOIN, calls, ['NAMES', 'LABELS'], shuffled), context(t));
        if (expected.length > 1) expect(reading.joinOrderRows).toEqual(expected);
        else expect(reading.joinOrderRows).toBeUndefined();
      } finally {
        await t.cleanup();
      }
    }
  });

  test("for pandas before 2.2, a merge's rows grouped by key as pandas 1.5.3 gives them", async () => {
    // pandas 1.5.3, merge(L, R, left_on='k', right_on='k2', how='inner'), read off the real
    // library: [(a, x), (a, y), (c, x), (c, y), (b, w), (b, z), (e, w), (e, z)]; 2.2 and later
    // keep L's order: a, b, c, e.
    const t = createDb({
      L: {
        columns: [
          ['k', 'INTEGER'],
          ['l', 'TEXT'],
        ],
        rows: [
          [2, 'a'],
          [1, 'b'],
          [2, 'c'],
          [3, 'd'],
          [1, 'e'],
        ],
      },
      R: {
        columns: [
          ['k2', 'INTEGER'],
          ['r', 'TEXT'],
        ],
        rows: [
          [1, 'w'],
          [2, 'x'],
          [2, 'y'],
          [1, 'z'],
        ],
      },
    });
    try {
      const init = innerJoinInit('L', 'R', { left: 'T1.k', right: 'T2.k2' });
      const calls: ToolCall[] = [
        { name: 'retrieve_data', label: 'A', arguments: { data_source: '$starting_table_var$', key_name: 'L_l' } },
        { name: 'retrieve_data', label: 'B', arguments: { data_source: '$starting_table_var$', key_name: 'R_r' } },
      ];
      const gold = [
        ['e', 'z'],
        ['a', 'x'],
        ['b', 'w'],
        ['c', 'y'],
        ['a', 'y'],
        ['c', 'x'],
        ['e', 'w'],
        ['b', 'z'],
      ];
      const old = await pandasReading(item(init, calls, ['A', 'B'], gold), context(t, '1.5'));
      expect(old.joinOrderRows).toEqual([
        ['a', 'x'],
        ['a', 'y'],
        ['c', 'x'],
        ['c', 'y'],
        ['b', 'w'],
        ['b', 'z'],
        ['e', 'w'],
        ['e', 'z'],
      ]);
      const current = await pandasReading(item(init, calls, ['A', 'B'], gold), context(t));
      expect(current.joinOrderRows?.map(([l]) => l)).toEqual(['a', 'a', 'b', 'b', 'c', 'c', 'e', 'e']);
    } finally {
      await t.cleanup();
    }
  });

  test('a sorted answer keeps its order: nothing is computed', async () => {
    const t = createTestDb(3, 20);
    try {
      const calls: ToolCall[] = [
        {
          name: 'sort_data',
          label: 'SORT_1',
          arguments: { data_source: '$starting_table_var$', key_name: 'tag_weight' },
        },
        { name: 'retrieve_data', label: 'A', arguments: { data_source: '$SORT_1$', key_name: 'item_name' } },
        { name: 'retrieve_data', label: 'B', arguments: { data_source: '$SORT_1$', key_name: 'tag_label' } },
      ];
      const reading = await pandasReading(
        item(
          INIT_JOIN,
          calls,
          ['A', 'B'],
          [
            ['x', 'y'],
            ['z', 'w'],
          ],
        ),
        context(t),
      );
      expect(reading.joinOrderRows).toBeUndefined();
    } finally {
      await t.cleanup();
    }
  });
});

describe('filters written as the Live API-Bench runtime runs them right', () => {
  const dialect = liveApiBenchDialect((db) => `${db}.sqlite`, {
    month: { floats: false, comparedAsNumbers: true },
    name: { floats: false, comparedAsNumbers: false },
  });

  test("LIKE '%text%' is contains (case-insensitive there, as SQLite's LIKE for ASCII)", () => {
    expect(dialect.filter('name', 'like', '%data visualization%')).toEqual({
      condition: 'contains',
      value: 'data visualization',
      departures: [],
    });
  });

  test('other LIKE patterns stay, listed: a prefix, a regex metacharacter, non-ASCII text, an inner wildcard', () => {
    for (const pattern of ['Adam%', '%a.b%', '%café%', '%a_b%', 'vice president']) {
      const filter = dialect.filter('name', 'like', pattern);
      expect(filter).toMatchObject({ condition: 'like', value: pattern });
      expect(filter.departures.some((d) => d.startsWith('like:'))).toBe(true);
    }
  });

  test('integer text on a column it reads as numbers is the number; leading zeros and unknown keys stay, listed', () => {
    expect(dialect.filter('month', 'equal_to', '201309')).toEqual({
      condition: 'equal_to',
      value: 201309,
      departures: [],
    });
    expect(dialect.filter('month', 'equal_to', '-1')).toMatchObject({ value: -1 });
    const zero = dialect.filter('month', 'equal_to', '0613360');
    expect(zero.value).toBe('0613360');
    expect(zero.departures.some((d) => d.startsWith('digit string'))).toBe(true);
    const derived = dialect.filter('month_substring', 'equal_to', '2020');
    expect(derived.value).toBe('2020');
    expect(derived.departures.some((d) => d.startsWith('digit string'))).toBe(true);
    expect(dialect.filter('name', 'equal_to', '42')).toEqual({ condition: 'equal_to', value: '42', departures: [] });
  });

  test('VAKRA keeps every filter as written', () => {
    expect(VAKRA.filter('name', 'like', '%data%')).toMatchObject({ condition: 'like', value: '%data%' });
    expect(VAKRA.filter('month', 'equal_to', '201309')).toMatchObject({ value: '201309' });
  });
});
