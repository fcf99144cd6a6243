import { mulberry32 } from '../../core/random.js';
import type { EvalItem } from '../../eval/dataset.js';
import { NeighbourIndex } from '../../eval/models/knn.js';
import { Bm25Index, tokenize } from '../../eval/retrieval/bm25.js';
import { sqlConstructs } from '../../eval/sql-constructs.js';

describe('BM25', () => {
  const documents = [
    'How many schools are in Fresno county?',
    'List the schools in Fresno with more than 500 students.',
    'What is the average price of Mystery books?',
    'Which members led a ride longer than 120 km?',
  ];
  const index = new Bm25Index(documents);

  test('the most similar question first; the item itself excluded', () => {
    expect(index.search('How many schools does Alameda county have?', 2).map((r) => r.index)).toEqual([0, 1]);
    expect(index.search(documents[0], 1, new Set([0])).map((r) => r.index)).toEqual([1]);
  });

  test('a hand-computed score', () => {
    // One document "a b", one "c": query "a". N = 2, n(a) = 1: idf = ln(1 + 1.5/1.5) = ln 2.
    // |d| = 2, avgdl = 1.5: norm = 1.2·(1 − 0.75 + 0.75·2/1.5) = 1.5; score = ln2·1·2.2/(1 + 1.5).
    const [top] = new Bm25Index(['a b', 'c']).search('a', 1);
    expect(top.index).toBe(0);
    expect(top.score).toBeCloseTo((Math.log(2) * 2.2) / 2.5, 10);
  });

  test('no shared word scores 0; ties keep the documents order', () => {
    expect(index.search('zebra', 4).map((r) => [r.index, r.score])).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 0],
    ]);
    expect(tokenize("Ça coûte 10 €, n'est-ce pas?")).toEqual(['ça', 'coûte', '10', 'n', 'est', 'ce', 'pas']);
  });

  test('every document ranked as the formula scores it, term by term in the query order', () => {
    const words = ['school', 'county', 'price', 'book', 'ride', 'the', 'of', 'a'];
    const random = mulberry32(35);
    const pick = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' ');
    const docs = Array.from({ length: 40 }, () => pick(1 + Math.floor(random() * 8)));
    const tokens = docs.map(tokenize);
    const avgdl = tokens.reduce((n, t) => n + t.length, 0) / docs.length;
    const reference = (query: string, exclude: number) =>
      docs
        .map((_, index) => {
          let score = 0;
          for (const term of new Set(tokenize(query))) {
            const f = tokens[index].filter((t) => t === term).length;
            if (!f) continue;
            const df = tokens.filter((t) => t.includes(term)).length;
            const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
            score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * tokens[index].length) / avgdl));
          }
          return { index, score };
        })
        .filter((hit) => hit.index !== exclude)
        .sort((x, y) => y.score - x.score || x.index - y.index);
    const index = new Bm25Index(docs);
    for (const [i, doc] of docs.entries()) {
      expect(index.search(doc, docs.length, new Set([i]))).toEqual(reference(doc, i));
      expect(index.search(`zebra ${doc}`, 3, new Set([i]))).toEqual(reference(doc, i).slice(0, 3));
    }
  });
});

describe('NeighbourIndex', () => {
  const item = (id: string, db: string, question: string) => ({ key: `slot/${db}/${id}`, db, question, evidence: '' });
  const items = [
    item('0', 'a', 'How many schools are in Fresno county?'),
    item('1', 'a', 'List the schools in Fresno with more than 500 students.'),
    item('2', 'a', 'What is the average price of Mystery books?'),
    item('3', 'b', 'How many schools are in Fresno county?'),
  ] as unknown as EvalItem[];
  const index = new NeighbourIndex(items);

  test("an item's neighbours: the other items of its database, nearest first, the same whoever asks", () => {
    expect(index.neighbours(items[0], 3).map((i) => i.key)).toEqual(['slot/a/1', 'slot/a/2']);
    expect(index.neighbours(items[0], 1)).toEqual(index.neighbours(items[0], 3).slice(0, 1));
    expect(index.neighbours(items[3], 3)).toEqual([]);
    expect(index.neighbours(items[1], 0)).toEqual([]);
  });

  test('asked for one, then for more: the ones asked for at once', () => {
    const asked = new NeighbourIndex(items);
    expect(asked.neighbours(items[1], 1).map((i) => i.key)).toEqual(['slot/a/0']);
    expect(asked.neighbours(items[1], 3)).toEqual(new NeighbourIndex(items).neighbours(items[1], 3));
    expect(asked.neighbours(items[1], 3).map((i) => i.key)).toEqual(['slot/a/0', 'slot/a/2']);
  });
});

describe('sqlConstructs', () => {
  test.each([
    ["SELECT name FROM school WHERE city = 'Fresno'", []],
    [
      'SELECT T1.name, COUNT(*) FROM a AS T1 INNER JOIN b AS T2 ON T1.id = T2.a_id WHERE x = 1 OR y IN (1, 2) GROUP BY T1.name HAVING COUNT(*) > 1 ORDER BY 2 DESC LIMIT 3',
      ['aggregate', 'group_by', 'having', 'in', 'join', 'limit', 'or', 'order_by'],
    ],
    ['SELECT a FROM t, u WHERE t.id = u.id', ['join']],
    ['SELECT a FROM t AS x, u', ['join']],
    [
      "SELECT CAST(SUM(IIF(v > 1, 1, 0)) AS REAL) FROM t WHERE strftime('%Y', d) BETWEEN '2000' AND '2010'",
      ['aggregate', 'between', 'case', 'cast', 'date'],
    ],
    ['SELECT a FROM t WHERE b = (SELECT MAX(b) FROM t) UNION SELECT c FROM u', ['aggregate', 'compound', 'subquery']],
    [
      'WITH w AS (SELECT a FROM t) SELECT DISTINCT a, RANK() OVER (ORDER BY a) FROM w',
      ['distinct', 'order_by', 'subquery', 'window', 'with'],
    ],
    ["SELECT name FROM t WHERE note = 'JOIN us, OR not' AND name LIKE 'A%'", ['like']],
  ])('%s', (sql, expected) => {
    expect(sqlConstructs(sql)).toEqual(expected);
  });
});
