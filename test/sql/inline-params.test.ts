import Database from 'better-sqlite3';
import { inlinedStatement } from '../../runtime/sql/inline-params.js';
import { toBindable, type SqlParam } from '../../runtime/sql/executor.js';

/** Seeded, so that a failure names values one can run again. */
function* randomValues(seed: number, n: number): Generator<SqlParam> {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const bits = new DataView(new ArrayBuffer(8));
  for (let i = 0; i < n; i++) {
    switch (i % 6) {
      case 0:
        yield Math.round((next() - 0.5) * 10 ** Math.floor(next() * 16));
        break;
      case 1:
        yield Number(`${Math.floor(next() * 10 ** (1 + Math.floor(next() * 15)))}e${Math.floor(next() * 60 - 30)}`);
        break;
      case 2:
        for (let b = 0; b < 8; b++) bits.setUint8(b, Math.floor(next() * 256));
        yield bits.getFloat64(0); // any double: NaN, subnormals, 17 significant digits
        break;
      case 3:
        yield String.fromCharCode(
          ...Array.from({ length: Math.floor(next() * 8) }, () => 32 + Math.floor(next() * 95)),
        );
        break;
      case 4:
        yield ["it's", '--', "'; DROP TABLE t; --", '?', 'a\u00e9\u4e2d', 'x\0y', ''][Math.floor(next() * 7)];
        break;
      default:
        yield [null, 2n ** 63n - 1n, -(2n ** 63n), 0, -0, 1e21, -5][Math.floor(next() * 7)];
    }
  }
}

describe('inlinedStatement: the literal text a bound statement means', () => {
  const db = new Database(':memory:');
  afterAll(() => db.close());
  // typeof and quote() tell the storage class and the exact value (quote() of a REAL prints
  // all 17 significant digits).
  const asBound = db.prepare('SELECT typeof(?) AS type, quote(?) AS value');

  test('where it gives a text, SQLite reads the very value bound: same storage class, same value', () => {
    let inlined = 0;
    for (const value of randomValues(42, 3000)) {
      const text = inlinedStatement('SELECT typeof(?) AS type, quote(?) AS value', [value, value]);
      if (text === null) continue;
      inlined++;
      expect([value, db.prepare(text).get()]).toEqual([value, asBound.get(toBindable(value), toBindable(value))]);
    }
    expect(inlined).toBeGreaterThan(2000);
  });

  test('values are written as the literals a gold SQL spells them with', () => {
    expect(
      inlinedStatement('SELECT name FROM t WHERE a = ? AND b > ? AND c LIKE ? AND d IS ?', [60, 0.5, "O'Brien%", null]),
    ).toBe("SELECT name FROM t WHERE a = 60 AND b > 0.5 AND c LIKE 'O''Brien%' AND d IS NULL");
    expect(inlinedStatement('SELECT 1 WHERE a = ?', [-5])).toBe('SELECT 1 WHERE a = -5');
    expect(inlinedStatement('SELECT 1', [])).toBe('SELECT 1');
  });

  test('no text where none is exact, or where the literal would not stay one token', () => {
    expect(inlinedStatement('SELECT ?', [0.1 + 0.2])).toBeNull(); // 17 significant digits
    expect(inlinedStatement('SELECT ?', [1e-40])).toBeNull();
    expect(inlinedStatement('SELECT ?', [Number.NaN])).toBeNull();
    expect(inlinedStatement('SELECT ?', ['x\0y'])).toBeNull();
    expect(inlinedStatement('SELECT ?', [-(2n ** 63n)])).toBeNull();
    expect(inlinedStatement('SELECT 1 -?', [-5])).toBeNull(); // `1 --5` is a comment
    expect(inlinedStatement('SELECT ??', ['a', 'b'])).toBeNull(); // 'a''b' is one string
  });

  test('no text where an integer would read as a column position', () => {
    const db = new Database(':memory:');
    db.exec("CREATE TABLE t (a, b); INSERT INTO t VALUES (2, 'x'), (1, 'y')");
    // Bound, 1 is a constant to sort by (plan order); written in, the first column.
    expect(db.prepare('SELECT a FROM t ORDER BY 1').pluck().all()).toEqual([1, 2]);
    expect(inlinedStatement('SELECT a FROM t ORDER BY ?', [1])).toBeNull();
    expect(inlinedStatement('SELECT a, count(*) FROM t GROUP BY b, ?', [1])).toBeNull();
    expect(inlinedStatement('SELECT a FROM t ORDER BY ?', ['a'])).toBe("SELECT a FROM t ORDER BY 'a'");
    expect(inlinedStatement('SELECT a FROM t WHERE a IN (?, ?)', [1, 2])).toBe('SELECT a FROM t WHERE a IN (1, 2)');
    db.close();
  });

  test('placeholders and values must match one for one, `?` only', () => {
    expect(inlinedStatement('SELECT ?, ?', [1])).toBeNull();
    expect(inlinedStatement('SELECT ?', [1, 2])).toBeNull();
    expect(inlinedStatement('SELECT :a', [1])).toBeNull();
    expect(inlinedStatement('SELECT ?1', [1])).toBeNull();
    // A `?` inside a string, a quoted name or a comment is not a placeholder.
    expect(inlinedStatement('SELECT \'?\', "?" /* ? */, ?', [7])).toBe('SELECT \'?\', "?" /* ? */, 7');
  });
});
