import type { ResultSet } from '../../core/model.js';
import { memoizeExecutor } from '../../pipeline/sql-memo.js';
import type { SqlExecutor, SqlRequest } from '../../runtime/sql/executor.js';

function counting(): { executor: SqlExecutor; calls: string[] } {
  const calls: string[] = [];
  const executor: SqlExecutor = {
    async run(request: SqlRequest): Promise<ResultSet> {
      calls.push(request.sql);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (request.sql === 'BAD') throw new Error('no such table');
      return { columns: ['x'], rows: [[request.sql], [request.params.length]] };
    },
    buildVariantTable: async () => 'built',
    close: async () => {},
  };
  return { executor, calls };
}

const request = (sql: string, params: SqlRequest['params'] = []): SqlRequest => ({
  dbPath: '/db',
  sql,
  params,
  timeoutMs: 1000,
});

describe('memoized SQL executor', () => {
  test('identical statements run once, in flight or finished; callers get their own rows', async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor);
    const [a, b] = await Promise.all([memo.run(request('SELECT 1')), memo.run(request('SELECT 1'))]);
    const c = await memo.run(request('SELECT 1'));
    expect(calls).toEqual(['SELECT 1']);
    expect(a).toEqual(c);
    a.rows[0][0] = 'changed';
    expect(b.rows[0][0]).toBe('SELECT 1');
    await memo.run(request('SELECT 1', [1]));
    await memo.run(request('SELECT 1', ['1']));
    expect(calls).toHaveLength(3);
  });

  test('errors are shared in flight but not kept', async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor);
    const both = await Promise.allSettled([memo.run(request('BAD')), memo.run(request('BAD'))]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(memo.run(request('BAD'))).rejects.toThrow('no such table');
    expect(calls).toEqual(['BAD', 'BAD']);
  });

  test('large results and old entries are not kept', async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor, { maxEntries: 1, maxCells: 10 });
    await memo.run(request('A'));
    await memo.run(request('B'));
    await memo.run(request('A'));
    expect(calls).toEqual(['A', 'B', 'A']);
    expect(memo.counts()).toEqual({ requests: 3, executions: 3, repeats: 1 });
    const tiny = counting();
    const noneKept = memoizeExecutor(tiny.executor, { maxCells: 1 });
    await noneKept.run(request('A'));
    await noneKept.run(request('A'));
    expect(tiny.calls).toEqual(['A', 'A']);
  });

  test("a database forgotten is asked again, and its statements' history goes with it", async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor);
    const other = { ...request('A'), dbPath: '/other' };
    await memo.run(request('A'));
    await memo.run(other);
    memo.forget('/db');
    await memo.run(request('A'));
    await memo.run(other);
    expect(calls).toEqual(['A', 'A', 'A']);
    expect(memo.counts()).toEqual({ requests: 4, executions: 3, repeats: 0 });
  });

  test('on a database variant, a statement with bound values shares the run of its literal spelling; on the database itself not', async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor);
    const view = { overlays: ['/variants/t.sqlite'], reverseScans: true };
    const gold = "SELECT x FROM t WHERE a = 60 AND b = 'O''Brien'";
    const endpoint = 'SELECT x FROM t WHERE a = ? AND b = ?';
    await memo.run({ ...request(gold), view });
    const shared = await memo.run({ ...request(endpoint, [60, "O'Brien"]), view });
    expect(shared.rows[0]).toEqual([gold]);
    await memo.run({ ...request(endpoint, [61, "O'Brien"]), view });
    await memo.run(request(gold));
    await memo.run(request(endpoint, [60, "O'Brien"]));
    expect(calls).toEqual([gold, endpoint, gold, endpoint]);
  });

  test('on the database itself, a request that names its literal spelling as giving the same rows shares that run, kept or in flight', async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor);
    const gold = 'SELECT x FROM t WHERE a = 60';
    const endpoint = 'SELECT x FROM t WHERE a = ?';
    const [first] = await Promise.all([
      memo.run(request(gold)),
      memo.run({ ...request(endpoint, [60]), sameRowsAs: gold }),
    ]);
    const kept = await memo.run({ ...request(endpoint, [60]), sameRowsAs: gold });
    // Kept under its own key as well: the same call without the hint (over HTTP) shares it.
    const again = await memo.run(request(endpoint, [60]));
    expect(calls).toEqual([gold]);
    expect([kept, again]).toEqual([first, first]);
    expect(memo.counts()).toEqual({ requests: 4, executions: 1, repeats: 0 });
  });

  test('a request shares its named statement only where its values written in are that text, and its select list holds no value', async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor);
    const gold = 'SELECT x FROM t WHERE a = 60';
    await memo.run(request(gold));
    await memo.run({ ...request('SELECT x FROM t WHERE a = ?', [61]), sameRowsAs: gold });
    await memo.run({ ...request('SELECT x FROM t WHERE a = ?', ['60']), sameRowsAs: gold });
    // SQLite names the column `? + 1` bound and `1 + 1` written in.
    await memo.run(request('SELECT 1 + 1 FROM t'));
    await memo.run({ ...request('SELECT ? + 1 FROM t', [1]), sameRowsAs: 'SELECT 1 + 1 FROM t' });
    expect(calls).toEqual([
      gold,
      'SELECT x FROM t WHERE a = ?',
      'SELECT x FROM t WHERE a = ?',
      'SELECT 1 + 1 FROM t',
      'SELECT ? + 1 FROM t',
    ]);
  });

  test('a request whose named statement fails in flight runs itself', async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor);
    const [bad, own] = await Promise.allSettled([
      memo.run(request('BAD')),
      memo.run({ ...request('SELECT x FROM t WHERE a = ?', [1]), sameRowsAs: 'BAD' }),
    ]);
    expect(bad.status).toBe('rejected');
    expect(own.status).toBe('fulfilled');
    expect(calls).toEqual(['BAD', 'SELECT x FROM t WHERE a = ?']);
  });

  test('views that differ only in overlays the statement does not read share results', async () => {
    const { executor, calls } = counting();
    const memo = memoizeExecutor(executor);
    const read = ['/variants/t.sqlite'];
    await memo.run({ ...request('SELECT x FROM t'), view: { overlays: read, reverseScans: true } });
    const more = { overlays: [...read, '/variants/u.sqlite'], reverseScans: true, read };
    await memo.run({ ...request('SELECT x FROM t'), view: more });
    await memo.run({ ...request('SELECT x FROM t'), view: { ...more, reverseScans: false } });
    expect(calls).toEqual(['SELECT x FROM t', 'SELECT x FROM t']);
  });
});
