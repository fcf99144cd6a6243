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
});
