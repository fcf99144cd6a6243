import type { GoldResult, SqlValue, ToolOutput } from '../../core/model.js';
import { answerRows, compareWithGold } from '../../verifiers/compare.js';
import { checkSemantic } from '../../verifiers/semantic.js';

function gold(
  rows: SqlValue[][],
  opts: { ordered?: boolean; distinct?: boolean; columns?: string[] } = {},
): GoldResult {
  const width = opts.columns?.length ?? rows[0]?.length ?? 1;
  return {
    columns: opts.columns ?? Array.from({ length: width }, (_, i) => `c${i}`),
    rows,
    executedSql: 'SELECT ...',
    ordered: opts.ordered ?? false,
    distinct: opts.distinct ?? false,
  };
}
const scalar = (value: SqlValue): ToolOutput => ({ kind: 'scalar', value });
const list = (...values: SqlValue[]): ToolOutput => ({ kind: 'list', values });
const table = (rows: SqlValue[][], columns = rows[0]?.map((_, i) => `k${i}`) ?? ['k0']): ToolOutput => ({
  kind: 'table',
  columns,
  rows,
});

describe('answerRows', () => {
  it('zips scalars, lists and tables column-wise', () => {
    expect(answerRows([scalar(1)])).toEqual([[1]]);
    expect(answerRows([list('a', 'b')])).toEqual([['a'], ['b']]);
    expect(
      answerRows([
        list('a', 'b'),
        table([
          [1, 2],
          [3, 4],
        ]),
      ]),
    ).toEqual([
      ['a', 1, 2],
      ['b', 3, 4],
    ]);
    expect(answerRows([scalar(1), scalar('x')])).toEqual([[1, 'x']]);
  });
  it('keeps empty outputs as zero rows', () => {
    expect(answerRows([list(), table([], ['a', 'b'])])).toEqual([]);
  });
  it('rejects mismatched lengths and empty answers as semantic:shape', () => {
    expect(answerRows([list(1, 2), list(1)])).toMatchObject({ ok: false, category: 'semantic:shape' });
    expect(answerRows([scalar(1), list(1, 2)])).toMatchObject({ ok: false, category: 'semantic:shape' });
    expect(answerRows([])).toMatchObject({ ok: false, category: 'semantic:shape' });
    expect(answerRows([table([], [])])).toMatchObject({ ok: false, category: 'semantic:shape' });
  });
});

describe('compareWithGold: success rules', () => {
  it('scalar equals a scalar, a one-element list and a 1x1 table', () => {
    const g = gold([[42]], { columns: ['COUNT(*)'] });
    for (const out of [scalar(42), list(42), table([[42]], ['whatever'])]) {
      expect(compareWithGold([out], g)).toMatchObject({ ok: true, category: 'scalar' });
    }
  });
  it('ignores column names', () => {
    expect(
      compareWithGold([table([['a', 1]], ['x', 'y'])], gold([['a', 1]], { columns: ['name', 'n'] })),
    ).toMatchObject({
      ok: true,
    });
  });
  it('integer 3 equals real 3.0 exactly', () => {
    expect(compareWithGold([scalar(3)], gold([[3.0]]))).toMatchObject({ ok: true, category: 'scalar' });
  });
  it('NULL equals NULL', () => {
    expect(compareWithGold([scalar(null)], gold([[null]]))).toMatchObject({ ok: true, category: 'scalar' });
    expect(compareWithGold([list(null, 1)], gold([[1], [null]]))).toMatchObject({ ok: true, category: 'multiset' });
  });
  it('floats within relative 1e-6 or absolute 1e-9 match, named float_tolerance', () => {
    expect(compareWithGold([scalar(33.33333333)], gold([[100 / 3]]))).toMatchObject({
      ok: true,
      category: 'float_tolerance',
    });
    expect(compareWithGold([scalar(1e6 + 0.5)], gold([[1e6]]))).toMatchObject({
      ok: true,
      category: 'float_tolerance',
    });
    expect(compareWithGold([scalar(5e-10)], gold([[0]]))).toMatchObject({ ok: true, category: 'float_tolerance' });
    expect(compareWithGold([scalar(1.00001)], gold([[1]]))).toMatchObject({
      ok: false,
      category: 'semantic:value_mismatch',
    });
    expect(compareWithGold([scalar(2e-9)], gold([[0]]))).toMatchObject({
      ok: false,
      category: 'semantic:value_mismatch',
    });
  });
  it('float tolerance also applies in unordered comparison, across rounding boundaries', () => {
    // 1.2345678850 and 1.2345678849 round to different 9-digit keys but are tolerance-equal.
    const g = gold([[1.234567885], [7], [2]]);
    expect(compareWithGold([list(2, 1.2345678849, 7)], g)).toMatchObject({ ok: true, category: 'float_tolerance' });
  });
  it('ordered gold: rows equal in order', () => {
    const g = gold([['a'], ['b'], ['c']], { ordered: true });
    expect(compareWithGold([list('a', 'b', 'c')], g)).toMatchObject({ ok: true, category: 'ordered' });
  });
  it('unordered gold: exact when as given, multiset after reordering, set when distinct', () => {
    expect(compareWithGold([list('a', 'b')], gold([['a'], ['b']]))).toMatchObject({ ok: true, category: 'exact' });
    expect(compareWithGold([list('b', 'a', 'a')], gold([['a'], ['a'], ['b']]))).toMatchObject({
      ok: true,
      category: 'multiset',
    });
    expect(compareWithGold([list('b', 'a')], gold([['a'], ['b']], { distinct: true }))).toMatchObject({
      ok: true,
      category: 'set',
    });
  });
  it('empty equals empty', () => {
    expect(compareWithGold([list()], gold([], { columns: ['x'] }))).toMatchObject({ ok: true, category: 'exact' });
  });
  it('checkSemantic wraps compareWithGold', () => {
    expect(checkSemantic([scalar(1)], gold([[1]]))).toEqual(compareWithGold([scalar(1)], gold([[1]])));
  });
});

describe('compareWithGold: failure categories', () => {
  it('semantic:column_count', () => {
    const v = compareWithGold(
      [list(1, 2)],
      gold([
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    expect(v).toMatchObject({ ok: false, category: 'semantic:column_count' });
    expect(v.message).toContain('expected 2 columns, got 1');
  });
  it('semantic:row_count', () => {
    expect(compareWithGold([list(1, 2, 3)], gold([[1], [2]]))).toMatchObject({
      ok: false,
      category: 'semantic:row_count',
    });
  });
  it('duplicates are respected (multiset, not set)', () => {
    const v = compareWithGold([list('a', 'b', 'b')], gold([['a'], ['a'], ['b']]));
    expect(v).toMatchObject({ ok: false, category: 'semantic:value_mismatch' });
    expect(v.message).toContain('["a"]');
  });
  it('one gold compared with many answers in turn judges each on its own (its rows by key are kept, never changed)', () => {
    const g = gold([
      ['a', 1],
      ['b', 2.5],
      ['b', 2.5],
      [null, 3],
    ]);
    const right = table([
      [null, 3],
      ['b', 2.5],
      ['a', 1],
      ['b', 2.5],
    ]);
    const wrong = table([
      [null, 3],
      ['b', 2.5],
      ['a', 1],
      ['a', 1],
    ]);
    const close = table([
      ['b', 2.5000000001],
      [null, 3],
      ['b', 2.5],
      ['a', 1],
    ]);
    expect(compareWithGold([right], g)).toMatchObject({ ok: true, category: 'multiset' });
    const v = compareWithGold([wrong], g);
    expect(v).toMatchObject({ ok: false, category: 'semantic:value_mismatch' });
    expect(v.message).toBe('gold row ["b",2.5] not in the answer; answer row ["a",1] not in gold');
    expect(compareWithGold([close], g)).toMatchObject({ ok: true, category: 'float_tolerance' });
    expect(compareWithGold([right], g)).toMatchObject({ ok: true, category: 'multiset' });
  });
  it('a distinct gold rejects an answer with duplicates by its row count', () => {
    expect(compareWithGold([list('a', 'a', 'b')], gold([['a'], ['b']], { distinct: true }))).toMatchObject({
      ok: false,
      category: 'semantic:row_count',
    });
  });
  it('semantic:order: same multiset, wrong order', () => {
    const v = compareWithGold([list('b', 'a')], gold([['a'], ['b']], { ordered: true }));
    expect(v).toMatchObject({ ok: false, category: 'semantic:order' });
    expect(v.message).toContain('row 0: expected ["a"], got ["b"]');
  });
  it('semantic:value_mismatch on ordered gold shows the first differing row', () => {
    const v = compareWithGold([list('a', 'x')], gold([['a'], ['b']], { ordered: true }));
    expect(v).toMatchObject({ ok: false, category: 'semantic:value_mismatch' });
    expect(v.message).toContain('row 1');
  });
  it('strings compare exactly; a number never equals a string; NULL never equals 0', () => {
    expect(compareWithGold([scalar('Alice ')], gold([['Alice']]))).toMatchObject({ ok: false });
    expect(compareWithGold([scalar('alice')], gold([['Alice']]))).toMatchObject({ ok: false });
    expect(compareWithGold([scalar('3')], gold([[3]]))).toMatchObject({
      ok: false,
      category: 'semantic:value_mismatch',
    });
    expect(compareWithGold([scalar(null)], gold([[0]]))).toMatchObject({
      ok: false,
      category: 'semantic:value_mismatch',
    });
  });
  it('semantic:shape from answerRows', () => {
    expect(
      compareWithGold(
        [list(1, 2), scalar(3)],
        gold([
          [1, 3],
          [2, 3],
        ]),
      ),
    ).toMatchObject({
      ok: false,
      category: 'semantic:shape',
    });
  });
});

// How fast these comparisons are is measured by `npm run bench` (bench/micro.ts), not asserted here.
describe('compareWithGold: large results', () => {
  function rows(n: number, seed: number): SqlValue[][] {
    let s = seed;
    const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
    return Array.from({ length: n }, (_, i) => [i % 97, `name ${i % 500}`, rnd() * 1000, i % 7 === 0 ? null : i]);
  }
  it('compares 20000 shuffled rows as a multiset', () => {
    const g = rows(20000, 7);
    const shuffled = [...g].reverse().map((r) => [r[0], r[1], (r[2] as number) * (1 + 1e-8), r[3]]);
    expect(compareWithGold([table(shuffled)], gold(g))).toMatchObject({ ok: true, category: 'float_tolerance' });
  });
  it('rejects a large genuine mismatch', () => {
    const g = rows(20000, 7);
    const other = rows(20000, 8);
    expect(compareWithGold([table(other)], gold(g))).toMatchObject({ ok: false, category: 'semantic:value_mismatch' });
  });
});
