import Database from 'better-sqlite3';
import type { GoldResult, SqlValue, ToolOutput } from '../../core/model.js';
import { tieProbe } from '../../generators/sql/ties.js';
import { mulberry32 } from '../../core/random.js';
import { checkDifferential, compareWithAcceptable, goldStrength, listMayMatch } from '../../verifiers/differential.js';
import { matchesTies, readTies } from '../../verifiers/ties.js';

/** The pure parts of differential verification: tie probes, tie groups, strengths, verdicts. */

const gold = (rows: GoldResult['rows'], extra: Partial<GoldResult> = {}): GoldResult => ({
  columns: rows[0]?.map((_, i) => `c${i}`) ?? ['c0'],
  rows,
  executedSql: 'SELECT …',
  ordered: false,
  distinct: false,
  ...extra,
});
const table = (rows: GoldResult['rows']): ToolOutput[] => [
  { kind: 'table', columns: rows[0]?.map((_, i) => `c${i}`) ?? ['c0'], rows },
];

describe('tieProbe', () => {
  test.each([
    ['SELECT name FROM t ORDER BY score DESC LIMIT 2', 'SELECT name , score FROM t ORDER BY score DESC ', 2, 0],
    [
      'SELECT name, score AS s FROM t ORDER BY s LIMIT 1 OFFSET 3',
      'SELECT name, score AS s , score FROM t ORDER BY s ',
      1,
      3,
    ],
    [
      'SELECT name, age FROM t ORDER BY 2 DESC, name LIMIT 5, 10',
      'SELECT name, age , age, name FROM t ORDER BY 2 DESC, name ',
      10,
      5,
    ],
    [
      'SELECT DISTINCT name FROM t JOIN u ON u.id = t.id ORDER BY u.date LIMIT 3',
      'SELECT  name , u . date FROM t JOIN u ON u.id = t.id ORDER BY u.date ',
      3,
      0,
    ],
  ])('%s', (sql, probe, limit, offset) => {
    expect(tieProbe(sql)).toMatchObject({ sql: probe, limit, offset });
  });

  test('without LIMIT the window is every row', () => {
    expect(tieProbe('SELECT name FROM t ORDER BY score')).toMatchObject({
      sql: 'SELECT name , score FROM t ORDER BY score',
      limit: Infinity,
    });
  });

  test.each([
    'SELECT name FROM t LIMIT 3',
    'SELECT a FROM t UNION SELECT a FROM u ORDER BY a LIMIT 1',
    'SELECT name FROM t ORDER BY score LIMIT (SELECT 1)',
  ])('no probe for %s', (sql) => {
    expect(tieProbe(sql)).toBeNull();
  });

  test('the probe runs, and its window holds the query’s own answer', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE t (name TEXT, score INT); INSERT INTO t VALUES ('a', 3), ('b', 5), ('c', 5), ('d', 1);`);
    const probe = tieProbe('SELECT name FROM t ORDER BY score DESC LIMIT 1')!;
    const rows = db.prepare(probe.sql).raw().all() as GoldResult['rows'];
    const reading = readTies(rows, probe.keys, probe, true);
    expect(reading.cut).toBe(true);
    expect(reading.ties!.groups[0]).toEqual([['b'], ['c']]);
  });
});

describe('readTies and matchesTies', () => {
  const window = { limit: 2, offset: 0, distinct: false };

  test('a tie inside the window only: any order of it, the same rows', () => {
    const reading = readTies(
      [
        ['a', 9],
        ['b', 9],
        ['c', 1],
      ],
      1,
      window,
      true,
    );
    expect(reading.cut).toBe(false);
    expect(matchesTies([['b'], ['a']], reading.ties!)).toBe(true);
    expect(matchesTies([['a'], ['c']], reading.ties!)).toBe(false);
    expect(matchesTies([['a'], ['a']], reading.ties!)).toBe(false);
  });

  test('fixed: only where rows that tie on the sort keys are the same row, and nothing is cut', () => {
    const read = (rows: GoldResult['rows'], w = window) => readTies(rows, 1, w, true).fixed;
    expect(
      read([
        ['a', 9],
        ['b', 5],
        ['c', 1],
      ]),
    ).toBe(true);
    expect(
      read([
        ['a', 9],
        ['a', 9],
        ['c', 1],
      ]),
    ).toBe(true);
    expect(
      read([
        ['a', 9],
        ['b', 9],
        ['c', 1],
      ]),
    ).toBe(false);
    expect(
      read([
        ['a', 9],
        ['b', 5],
        ['c', 5],
      ]),
    ).toBe(false);
    expect(
      read(
        [
          ['a', 9],
          ['b', 5],
        ],
        { limit: 2, offset: 0, distinct: true },
      ),
    ).toBe(false);
  });

  test('a tie across the cut: the window is open; rows that only look alike are no tie', () => {
    expect(
      readTies(
        [
          ['a', 9],
          ['b', 5],
          ['c', 5],
        ],
        1,
        window,
        true,
      ).cut,
    ).toBe(true);
    expect(
      readTies(
        [
          ['a', 9],
          ['b', 5],
          ['b', 5],
        ],
        1,
        window,
        true,
      ).cut,
    ).toBe(false);
    // The probe stopped at its bound inside the last group: it may go on.
    expect(
      readTies(
        [
          ['a', 9],
          ['b', 5],
          ['c', 5],
        ],
        1,
        { ...window, limit: 3 },
        false,
      ).cut,
    ).toBe(true);
  });

  test('DISTINCT ordered by a key that varies within a distinct row: the window depends on which key orders it', () => {
    const distinct = { limit: 1, offset: 0, distinct: true };
    const settled: GoldResult['rows'] = [
      ['x', 1],
      ['x', 2],
      ['y', 3],
    ];
    const open: GoldResult['rows'] = [
      ['x', 1],
      ['y', 2],
      ['x', 3],
    ];
    expect(readTies(settled, 1, distinct, true).cut).toBe(false);
    expect(readTies(open, 1, distinct, true).cut).toBe(true);
    // Where the probe stopped short, the first-occurrence placement is not known to be the only one.
    expect(readTies(open, 1, distinct, false).cut).toBe(false);
  });

  test('DISTINCT rows tied on the sort keys: any order among them within the window, a tie across its edge is open', () => {
    const top2 = { limit: 2, offset: 0, distinct: true };
    const rows: GoldResult['rows'] = [
      ['x', 9],
      ['x', 9],
      ['y', 9],
      ['z', 1],
    ];
    const reading = readTies(rows, 1, top2, true);
    expect(reading).toMatchObject({ cut: false, fixed: false });
    expect(matchesTies([['y'], ['x']], reading.ties!)).toBe(true);
    expect(matchesTies([['x'], ['y']], reading.ties!)).toBe(true);
    expect(matchesTies([['x'], ['z']], reading.ties!)).toBe(false);
    expect(matchesTies([['x'], ['x']], reading.ties!)).toBe(false);
    // LIMIT 1 through the tie of x and y: which one is the answer is open.
    expect(readTies(rows, 1, { ...top2, limit: 1 }, true).cut).toBe(true);
  });

  test('DISTINCT with the probe cut short: distinct rows tied on the sort keys across the window edge', () => {
    const distinct = { limit: 1, offset: 0, distinct: true };
    const tied: GoldResult['rows'] = [
      ['x', 9],
      ['x', 9],
      ['y', 9],
      ['z', 8],
    ];
    const apart: GoldResult['rows'] = [
      ['x', 9],
      ['x', 9],
      ['y', 8],
      ['y', 8],
    ];
    expect(readTies(tied, 1, distinct, false).cut).toBe(true);
    expect(readTies(apart, 1, distinct, false).cut).toBe(false);
    expect(readTies(tied, 1, { ...distinct, limit: 2 }, false).cut).toBe(false);
    expect(readTies(tied, 1, { ...distinct, offset: 1 }, false).cut).toBe(true);
  });

  test('open: a cut the tie groups cannot list', () => {
    // Every row of the cut group is listed: the groups accept any pick of it, so the cut is not open.
    const listed = readTies(
      [
        ['a', 9],
        ['b', 5],
        ['c', 5],
      ],
      1,
      window,
      true,
    );
    expect(listed).toMatchObject({ cut: true, open: false });
    // Too many tied rows to keep as groups.
    const many = Array.from({ length: 1001 }, (_, i) => [`r${i}`, 5]);
    expect(readTies(many, 1, window, true)).toMatchObject({ ties: null, cut: true, open: true });
    // A DISTINCT row whose unselected sort key varies: which key orders it is unspecified.
    const distinct = { limit: 1, offset: 0, distinct: true };
    const straddling: GoldResult['rows'] = [
      ['x', 1],
      ['y', 2],
      ['x', 3],
    ];
    expect(readTies(straddling, 1, distinct, true)).toMatchObject({ cut: true, open: true });
    // Distinct rows tied across the edge where the probe stopped at its bound: more may follow unseen.
    const bounded: GoldResult['rows'] = [
      ['x', 9],
      ['y', 9],
    ];
    expect(readTies(bounded, 1, distinct, false)).toMatchObject({ cut: true, open: true });
    expect(readTies(bounded, 1, distinct, true)).toMatchObject({ cut: true, open: false });
    // Not cut, not open.
    expect(
      readTies(
        [
          ['a', 9],
          ['b', 5],
        ],
        1,
        window,
        true,
      ),
    ).toMatchObject({ cut: false, open: false });
  });
});

describe('goldStrength', () => {
  test.each([
    [[], [], 'empty'],
    [[[0, null]], [], 'trivial'],
    [[[3]], [], undefined],
    [[[3]], [{ variant: 'perturbed-1', answers: [[[3]]] }], 'insensitive'],
    [[[3]], [{ variant: 'perturbed-1', answers: [[[4]]] }], 'discriminating'],
    // Where the gold's window is open, its answer is an arbitrary pick: no evidence either way.
    [[[3]], [{ variant: 'perturbed-1', answers: [[[4]]], open: true }], undefined],
    [[[3]], [{ variant: 'perturbed-1', answers: [[[3]]], open: true }], undefined],
    [
      [[3]],
      [
        { variant: 'perturbed-1', answers: [[[4]]], open: true },
        { variant: 'perturbed-2', answers: [[[3]]] },
      ],
      'insensitive',
    ],
  ] as const)('%j on %j is %s', (rows, perturbed, strength) => {
    expect(goldStrength(gold(rows as unknown as GoldResult['rows']), perturbed as never)).toBe(strength);
  });
});

describe('checkDifferential', () => {
  const g = gold([[1]], {
    variants: [
      { variant: 'reordered', answers: [[[1]]] },
      { variant: 'perturbed-1', answers: [[[7]], [[8]]] },
    ],
  });

  test('agrees when every variant’s answer is acceptable there', () => {
    const verdict = checkDifferential(g, [
      { variant: 'reordered', outputs: table([[1]]) },
      { variant: 'perturbed-1', outputs: table([[8]]) },
    ]);
    expect(verdict).toMatchObject({ ok: true, category: 'differential:agrees' });
  });

  test('the first disagreement rejects, naming the variant, with both answers', () => {
    const verdict = checkDifferential(g, [
      { variant: 'reordered', outputs: table([[1]]) },
      { variant: 'perturbed-1', outputs: table([[5]]) },
    ]);
    expect(verdict.ok).toBe(false);
    expect(verdict.category).toBe('differential:perturbed-1');
    expect(verdict.message).toContain('[[7]]');
    expect(verdict.message).toContain('[[5]]');
  });

  test('a failure of the sample on a variant rejects it', () => {
    const verdict = checkDifferential(g, [{ variant: 'reordered', error: 'integer overflow' }]);
    expect(verdict).toMatchObject({ ok: false, category: 'differential:reordered' });
    expect(verdict.message).toContain('integer overflow');
  });

  test('without variants there is nothing to disagree with', () => {
    expect(checkDifferential(gold([[1]]), [])).toMatchObject({ ok: true, category: 'differential:none' });
  });

  describe('a variant where the gold’s window is open', () => {
    const withOpen = gold([[1]], {
      variants: [
        { variant: 'reordered', answers: [[[1]]] },
        { variant: 'perturbed-1', answers: [[[7]]], open: true },
        { variant: 'perturbed-2', answers: [[[9]]] },
      ],
    });

    test('does not decide: another pick there is accepted, and the verdict names it as not compared', () => {
      const verdict = checkDifferential(withOpen, [
        { variant: 'perturbed-1', outputs: table([[5]]) },
        { variant: 'perturbed-2', outputs: table([[9]]) },
      ]);
      expect(verdict).toMatchObject({ ok: true, category: 'differential:agrees' });
      expect(verdict.message).toMatch(/agrees with the gold on perturbed-2; .*open on perturbed-1/);
    });

    test('the other variants still decide', () => {
      const verdict = checkDifferential(withOpen, [
        { variant: 'perturbed-1', outputs: table([[7]]) },
        { variant: 'perturbed-2', outputs: table([[6]]) },
      ]);
      expect(verdict).toMatchObject({ ok: false, category: 'differential:perturbed-2' });
    });

    test('a failure there still rejects', () => {
      const verdict = checkDifferential(withOpen, [{ variant: 'perturbed-1', error: 'no such column' }]);
      expect(verdict).toMatchObject({ ok: false, category: 'differential:perturbed-1' });
    });

    test('when it is the only variant run, the verdict claims no agreement', () => {
      const verdict = checkDifferential(withOpen, [{ variant: 'perturbed-1', outputs: table([[5]]) }]);
      expect(verdict).toMatchObject({ ok: true, category: 'differential:open' });
      expect(verdict.message).not.toContain('agrees');
    });
  });
});

test('a kept nondeterministic gold accepts any of its answers, and tied rows in any order', () => {
  const kept = gold([['a'], ['b']], {
    ordered: true,
    acceptable: [
      [['a'], ['b']],
      [['a'], ['c']],
    ],
    ties: { groups: [[['a']], [['b'], ['c']]], positions: [0, 1] },
  });
  expect(compareWithAcceptable(table([['a'], ['c']]), kept).ok).toBe(true);
  expect(compareWithAcceptable(table([['a'], ['d']]), kept).ok).toBe(false);
  const tiedInside = gold([['a'], ['b']], { ordered: true, ties: { groups: [[['a'], ['b']]], positions: [0, 0] } });
  expect(compareWithAcceptable(table([['b'], ['a']]), tiedInside)).toMatchObject({ ok: true, category: 'ties' });
});

test('listMayMatch: false only where the comparison refuses the list', () => {
  const kept = gold([['a'], [1.5]], {
    ordered: true,
    acceptable: [[['a'], [1.5]], [[null]]],
    ties: { groups: [[['a'], ['b'], [2]]], positions: [0, 0, 0] },
  });
  const pool: SqlValue[] = ['a', 'b', 'c', null, 1.5, 1.5000000001, 2, 3];
  const random = mulberry32(7);
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const values = Array.from({ length: Math.floor(random() * 4) }, () => pool[Math.floor(random() * pool.length)]);
    const accepted = compareWithAcceptable([{ kind: 'list', values }], kept).ok;
    if (!listMayMatch(values, kept)) {
      refused++;
      expect(accepted).toBe(false);
    }
  }
  expect(refused).toBeGreaterThan(1000);
  expect(listMayMatch(['b', 'a', 2], kept)).toBe(true); // the tie groups' window
  expect(listMayMatch([1.5000000001, 'a'], kept)).toBe(true); // numbers are left to the comparison
  expect(listMayMatch(['c'], kept)).toBe(false);
  expect(listMayMatch(['a', 'b', 'c', 'd'], kept)).toBe(false);
});
