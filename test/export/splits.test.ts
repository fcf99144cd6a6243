import { leakageReport, jaccard, type LeakageItem } from '../../export/leakage.js';
import { apportion, DEFAULT_SHARES, splitByDatabase, splitByQuestion, type SplitItem } from '../../export/splits.js';

/** Splits without leakage and the leakage report, on hand-made items. */

const items = (dbSizes: Record<string, number>): SplitItem[] =>
  Object.entries(dbSizes).flatMap(([db, n]) =>
    Array.from({ length: n }, (_, i) => ({ key: `${db}/${i}`, db, difficulty: i % 3 === 0 ? 'hard' : 'simple' })),
  );

describe('apportion', () => {
  test('largest remainders: the counts add up and follow the shares', () => {
    expect(apportion(10, DEFAULT_SHARES)).toEqual({ train: 8, validation: 1, test: 1 });
    // 5.6 / 0.7 / 0.7: floors 5 / 0 / 0, the two units left to the largest remainders (0.7, 0.7).
    expect(apportion(7, DEFAULT_SHARES)).toEqual({ train: 5, validation: 1, test: 1 });
    expect(apportion(0, DEFAULT_SHARES)).toEqual({ train: 0, validation: 0, test: 0 });
    expect(apportion(3, { train: 1, validation: 1, test: 1 })).toEqual({ train: 1, validation: 1, test: 1 });
  });
});

describe('by database', () => {
  const corpus = items({ a: 40, b: 30, c: 10, d: 10, e: 6, f: 4 });
  test('every database in one split, item shares near the targets, the same for the same seed', () => {
    const split = splitByDatabase(corpus, DEFAULT_SHARES, 7);
    expect(split.size).toBe(corpus.length);
    const perDb = new Map<string, Set<string>>();
    for (const item of corpus) perDb.set(item.db, (perDb.get(item.db) ?? new Set()).add(split.get(item.key)!));
    expect([...perDb.values()].every((s) => s.size === 1)).toBe(true);
    const counts = { train: 0, validation: 0, test: 0 };
    for (const s of split.values()) counts[s]++;
    // 100 items: the two largest databases (70) train, then the others fill validation and test.
    expect(counts.train).toBeGreaterThanOrEqual(70);
    expect(counts.validation).toBeGreaterThan(0);
    expect(counts.test).toBeGreaterThan(0);
    expect(splitByDatabase(corpus, DEFAULT_SHARES, 7)).toEqual(split);
    const report = leakageReport(asLeakage(corpus), split);
    expect(report.sharedDatabases).toEqual([]);
  });
});

describe('by question', () => {
  test('each (database, difficulty) stratum cut by the shares; a different seed, a different cut', () => {
    const corpus = items({ a: 20, b: 10 });
    const split = splitByQuestion(corpus, DEFAULT_SHARES, 1);
    const count = (db: string, difficulty: string, s: string) =>
      corpus.filter((i) => i.db === db && i.difficulty === difficulty && split.get(i.key) === s).length;
    // a: 7 hard items (0, 3, …, 18) and 13 simple; b: 4 hard and 6 simple.
    expect(count('a', 'hard', 'train')).toBe(apportion(7, DEFAULT_SHARES).train);
    expect(count('a', 'simple', 'test')).toBe(apportion(13, DEFAULT_SHARES).test);
    expect(count('b', 'hard', 'validation')).toBe(apportion(4, DEFAULT_SHARES).validation);
    expect(splitByQuestion(corpus, DEFAULT_SHARES, 2)).not.toEqual(split);
  });
});

describe('leakage report', () => {
  const leak = (key: string, db: string, question: string, sql = `SELECT ${key}`, calls = key): LeakageItem => ({
    key,
    db,
    question,
    sql,
    calls: [calls],
  });
  test('identical and near-identical questions, identical SQL and calls across splits, counted once per pair', () => {
    const corpus = [
      leak('1', 'a', 'How many schools are in Alameda?', 'SELECT COUNT(*) FROM s', 'c1'),
      leak('2', 'b', 'how many schools are in alameda?', 'select count(*)  from s', 'c1'),
      leak('3', 'a', 'How many schools are in Fresno County?'),
      leak('4', 'a', 'Name every magnet school.'),
    ];
    const split = new Map([
      ['1', 'train'],
      ['2', 'test'],
      ['3', 'test'],
      ['4', 'train'],
    ] as const);
    const report = leakageReport(corpus, split);
    expect(report.sharedDatabases).toEqual(['a']);
    expect(report.identicalQuestions).toEqual({ pairs: 1, examples: [['1', '2']] });
    expect(report.identicalSql.pairs).toBe(1);
    expect(report.identicalCalls.pairs).toBe(1);
    // {how, many, schools, are, in, alameda} vs {…, fresno, county}: 5/8 < 0.8; 1~2 is 1.0.
    expect(report.nearDuplicateQuestions).toEqual({ pairs: 1, examples: [['1', '2']], threshold: 0.8 });
    expect(jaccard(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(1 / 3);
  });
});

function asLeakage(corpus: SplitItem[]): LeakageItem[] {
  return corpus.map((i) => ({ key: i.key, db: i.db, question: `question ${i.key}`, sql: i.key, calls: [i.key] }));
}
