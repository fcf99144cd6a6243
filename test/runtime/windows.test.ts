import type { ToolCall, ToolOutput, ToolPool } from '../../core/model.js';
import { executeSequence } from '../../runtime/slot/index.js';
import { createDb, reference, tableInit, toolErrorCode, type TestDb } from './helpers.js';

/**
 * The window operations of transform_data (docs/TOOLS.md, "Operations"), each against the
 * SQL written by hand over the same rows. pts has ties (10 three times, 20 twice) and a
 * NULL, day has ties too, so a window that broke ties by anything but the table's current
 * order, or split RANGE peers, answers otherwise.
 */

let t: TestDb;
beforeAll(() => {
  t = createDb({
    s: {
      columns: [
        ['id', 'INTEGER'],
        ['team', 'TEXT'],
        ['pts', 'INTEGER'],
        ['day', 'INTEGER'],
      ],
      rows: [
        [1, 'a', 10, 1],
        [2, 'b', 20, 1],
        [3, 'a', 10, 2],
        [4, 'a', 30, 3],
        [5, 'b', null, 2],
        [6, 'b', 20, 3],
        [7, 'a', 10, 4],
      ],
    },
  });
});
afterAll(() => t.cleanup());

const INIT = tableInit('s');
const S = '$starting_table_var$';
const KEYS = ['s_id', 's_team', 's_pts', 's_day'];

function c(name: string, label: string, args: Record<string, unknown>): ToolCall {
  return { name, label, arguments: args };
}

function transform(operation_type: string, operation_args: Record<string, unknown>, source = S): ToolCall {
  return c('transform_data', 'w', {
    data_source: source,
    key_name: 's_pts',
    operation_type,
    operation_args: { ...operation_args, new_key_name: 'w' },
  });
}

async function run(calls: ToolCall[]): Promise<ToolOutput> {
  const [out] = await executeSequence(
    { initialization: [INIT], calls, answerLabels: [calls[calls.length - 1].label] },
    t.info,
    t.executor,
    { timeoutMs: 5000, pool: 'extended' },
  );
  return out;
}

/** The table with the window column `w`, in `order` (the transformed table's order), as SQLite computes it. */
function expected(window: string, order = 'rowid', where = ''): ToolOutput {
  const rows = reference(t.raw, `SELECT id, team, pts, day, ${window} FROM s ${where} ORDER BY ${order}`);
  return { kind: 'table', columns: [...KEYS, 'w'], rows };
}

const SORTED_BY_DAY_DESC = c('sort_data', 'o', { data_source: S, key_name: 's_day', ascending: false });

describe('row_number', () => {
  test('ties on key go by the table order, here a sort_data by day descending', async () => {
    const out = await run([SORTED_BY_DAY_DESC, transform('row_number', {}, '$o$')]);
    expect(out).toEqual(expected('ROW_NUMBER() OVER (ORDER BY pts DESC, day DESC, rowid)', 'day DESC, rowid'));
    // Not the rowid order among ties: id 7 (day 4) comes before ids 3 and 1.
    expect(out).not.toEqual(expected('ROW_NUMBER() OVER (ORDER BY pts DESC, rowid)', 'day DESC, rowid'));
  });

  test('ascending, then_by, partition_by', async () => {
    const out = await run([
      transform('row_number', {
        ascending: true,
        then_by: [{ key_name: 's_day', ascending: false }],
        partition_by: ['s_team'],
      }),
    ]);
    expect(out).toEqual(expected('ROW_NUMBER() OVER (PARTITION BY team ORDER BY pts ASC, day DESC, rowid)'));
  });

  test('over the rows a filter kept, and over the groups of a grouped table', async () => {
    const filtered = await run([
      c('filter_data', 'f', { data_source: S, key_name: 's_day', condition: 'greater_than', value: 1 }),
      transform('row_number', { ascending: true }, '$f$'),
    ]);
    expect(filtered).toEqual(expected('ROW_NUMBER() OVER (ORDER BY pts ASC, rowid)', 'rowid', 'WHERE day > 1'));
    const grouped = await run([
      c('group_data_by', 'g', { data_source: S, key_name: 's_day' }),
      c('aggregate_data', 'n', { data_source: '$g$', key_name: 's_pts', aggregation_type: 'sum' }),
      c('transform_data', 'w', {
        data_source: '$n$',
        key_name: 'sum_s_pts',
        operation_type: 'row_number',
        operation_args: { new_key_name: 'w' },
      }),
    ]);
    expect(grouped).toEqual({
      kind: 'table',
      columns: ['s_day', 'sum_s_pts', 'w'],
      rows: reference(
        t.raw,
        'SELECT day, SUM(pts), ROW_NUMBER() OVER (ORDER BY SUM(pts) DESC, day) FROM s GROUP BY day ORDER BY day',
      ),
    });
  });
});

describe('rank', () => {
  test('then_by orders ties of key; rows tied on every key share a rank, whatever the table order', async () => {
    const args = { then_by: [{ key_name: 's_team' }] };
    const window = 'RANK() OVER (ORDER BY pts DESC, team ASC)';
    expect(await run([transform('rank', args)])).toEqual(expected(window));
    expect(await run([SORTED_BY_DAY_DESC, transform('rank', args, '$o$')])).toEqual(
      expected(window, 'day DESC, rowid'),
    );
    expect(await run([transform('rank', { ...args, dense: true, ascending: true })])).toEqual(
      expected('DENSE_RANK() OVER (ORDER BY pts ASC, team ASC)'),
    );
  });
});

describe('ntile', () => {
  test('buckets over key then the table order, per partition', async () => {
    expect(await run([transform('ntile', { buckets: 3, ascending: true })])).toEqual(
      expected('NTILE(3) OVER (ORDER BY pts ASC, rowid)'),
    );
    expect(
      await run([SORTED_BY_DAY_DESC, transform('ntile', { buckets: 2, partition_by: ['s_team'] }, '$o$')]),
    ).toEqual(expected('NTILE(2) OVER (PARTITION BY team ORDER BY pts DESC, day DESC, rowid)', 'day DESC, rowid'));
  });
});

describe('lag and lead', () => {
  test('offset and a literal default, per partition; ties on order_by go by the table order', async () => {
    const out = await run([
      transform('lag', {
        order_by: [{ key_name: 's_day', ascending: true }],
        offset: 2,
        default: { value: -1 },
        partition_by: ['s_team'],
      }),
    ]);
    expect(out).toEqual(expected('LAG(pts, 2, -1) OVER (PARTITION BY team ORDER BY day ASC, rowid)'));
  });

  test('default 1 row and NULL; a column as default; after a sort, ties follow it', async () => {
    expect(await run([transform('lead', { order_by: [{ key_name: 's_day' }] })])).toEqual(
      expected('LEAD(pts) OVER (ORDER BY day, rowid)'),
    );
    const sorted = c('sort_data', 'o', { data_source: S, key_name: 's_team', ascending: false });
    const out = await run([
      sorted,
      transform('lead', { order_by: [{ key_name: 's_day' }], default: { key_name: 's_id' } }, '$o$'),
    ]);
    expect(out).toEqual(expected('LEAD(pts, 1, id) OVER (ORDER BY day, team DESC, rowid)', 'team DESC, rowid'));
    expect(await run([transform('lag', { order_by: [{ key_name: 's_day', ascending: false }], offset: 0 })])).toEqual(
      expected('LAG(pts, 0) OVER (ORDER BY day DESC, rowid)'),
    );
  });
});

describe('running', () => {
  test('without order_by: the whole partition', async () => {
    expect(await run([transform('running', { aggregation: 'sum', partition_by: ['s_team'] })])).toEqual(
      expected('SUM(pts) OVER (PARTITION BY team)'),
    );
  });

  test('order_by without frame is RANGE: rows tied on order_by count together; a frame counts rows', async () => {
    const range = await run([transform('running', { aggregation: 'sum', order_by: [{ key_name: 's_day' }] })]);
    expect(range).toEqual(expected('SUM(pts) OVER (ORDER BY day)'));
    const rows = await run([
      transform('running', { aggregation: 'sum', order_by: [{ key_name: 's_day' }], frame: {} }),
    ]);
    expect(rows).toEqual(
      expected('SUM(pts) OVER (ORDER BY day, rowid ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)'),
    );
    // The peers of day 1 (ids 1 and 2) tell the two apart.
    expect(rows).not.toEqual(range);
  });

  test('frames: preceding / following bounds, null for unbounded; every aggregation', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        { aggregation: 'mean', frame: { preceding: 1, following: 1 } },
        'AVG(pts) OVER (ORDER BY day, rowid ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)',
      ],
      [
        { aggregation: 'count_rows', frame: { preceding: null, following: null } },
        'COUNT(*) OVER (ORDER BY day, rowid ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)',
      ],
      [
        { aggregation: 'max', frame: { preceding: 0, following: 2 } },
        'MAX(pts) OVER (ORDER BY day, rowid ROWS BETWEEN 0 PRECEDING AND 2 FOLLOWING)',
      ],
      [
        { aggregation: 'min', frame: { preceding: 2 }, partition_by: ['s_team'] },
        'MIN(pts) OVER (PARTITION BY team ORDER BY day, rowid ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)',
      ],
      [{ aggregation: 'count' }, 'COUNT(pts) OVER (ORDER BY day)'],
    ];
    for (const [args, window] of cases) {
      const out = await run([transform('running', { order_by: [{ key_name: 's_day' }], ...args })]);
      expect(out).toEqual(expected(window));
    }
  });

  test('a frame without order_by counts rows in the table order', async () => {
    const out = await run([
      SORTED_BY_DAY_DESC,
      transform('running', { aggregation: 'sum', frame: { preceding: 1 } }, '$o$'),
    ]);
    expect(out).toEqual(
      expected('SUM(pts) OVER (ORDER BY day DESC, rowid ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)', 'day DESC, rowid'),
    );
  });
});

describe('refusals', () => {
  const codeOf = (calls: ToolCall[], pool?: ToolPool): string => toolErrorCode(t.info, [INIT], calls, pool);
  const order = [{ key_name: 's_day' }];
  test.each<[string, string, Record<string, unknown>, ToolPool]>([
    ['missing_argument', 'ntile', {}, 'extended'],
    ['bad_value', 'ntile', { buckets: 0 }, 'extended'],
    ['wrong_type', 'ntile', { buckets: 1.5 }, 'extended'],
    ['unknown_argument', 'row_number', { buckets: 2 }, 'extended'],
    ['missing_argument', 'lag', {}, 'extended'],
    ['bad_value', 'lag', { order_by: [] }, 'extended'],
    ['bad_value', 'lead', { order_by: order, offset: -1 }, 'extended'],
    ['unknown_key', 'lead', { order_by: [{ key_name: 's_nope' }] }, 'extended'],
    ['missing_argument', 'lead', { order_by: [{ ascending: true }] }, 'extended'],
    ['unknown_argument', 'lead', { order_by: [{ key_name: 's_day', desc: true }] }, 'extended'],
    ['wrong_type', 'row_number', { then_by: [{ key_name: 's_day', ascending: 'yes' }] }, 'extended'],
    ['wrong_type', 'row_number', { then_by: 's_day' }, 'extended'],
    ['unknown_key', 'rank', { partition_by: ['s_nope'] }, 'extended'],
    ['missing_argument', 'running', {}, 'extended'],
    ['bad_value', 'running', { aggregation: 'median' }, 'extended'],
    ['bad_value', 'running', { aggregation: 'sum', frame: { preceding: -1 } }, 'extended'],
    ['wrong_type', 'running', { aggregation: 'sum', frame: { following: 'all' } }, 'extended'],
    ['unknown_argument', 'running', { aggregation: 'sum', frame: { start: 1 } }, 'extended'],
    ['wrong_type', 'running', { aggregation: 'sum', frame: 3 }, 'extended'],
    ['not_in_pool', 'row_number', {}, 'paper'],
    ['not_in_pool', 'running', { aggregation: 'sum' }, 'paper'],
  ])('%s: %s %j', (code, op, args, pool) => {
    expect(codeOf([transform(op, args)], pool)).toBe(code);
  });

  test.each(['row_number', 'ntile', 'lag', 'lead', 'running', 'rank'])('calculate refuses %s (no rows)', (op) => {
    expect(codeOf([c('calculate', 'x', { value: 1, operation_type: op, operation_args: {} })])).toBe('bad_value');
  });
});
