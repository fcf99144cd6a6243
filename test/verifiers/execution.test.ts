import { SqlExecutionError, SqlTimeoutError } from '../../runtime/sql/executor.js';
import { checkExecution } from '../../verifiers/execution.js';

class ToolError extends Error {
  override name = 'ToolError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

describe('checkExecution', () => {
  it('executed', () => {
    expect(checkExecution({ ok: true, outputs: [{ kind: 'scalar', value: 1 }] })).toEqual({
      ok: true,
      category: 'executed',
      message: '1 outputs',
    });
  });
  it('execution:timeout', () => {
    expect(checkExecution({ ok: false, error: new SqlTimeoutError('after 5000 ms') })).toEqual({
      ok: false,
      category: 'execution:timeout',
      message: 'after 5000 ms',
    });
    // Errors from a worker process arrive as plain objects.
    expect(checkExecution({ ok: false, error: { name: 'SqlTimeoutError', message: 'x' } }).category).toBe(
      'execution:timeout',
    );
  });
  it('execution:tool_error:<code>', () => {
    const v = checkExecution({ ok: false, error: new ToolError('unknown_key', 'no key book_x') });
    expect(v).toEqual({ ok: false, category: 'execution:tool_error:unknown_key', message: 'no key book_x' });
  });
  it('execution:sql_error, even when the error carries a code', () => {
    expect(checkExecution({ ok: false, error: new SqlExecutionError('no such column') }).category).toBe(
      'execution:sql_error',
    );
    const sqlite = Object.assign(new Error('near "x": syntax error'), { name: 'SqliteError', code: 'SQLITE_ERROR' });
    expect(checkExecution({ ok: false, error: sqlite }).category).toBe('execution:sql_error');
  });
  it('execution:internal otherwise', () => {
    expect(checkExecution({ ok: false, error: new TypeError('x is undefined') })).toEqual({
      ok: false,
      category: 'execution:internal',
      message: 'TypeError: x is undefined',
    });
    expect(checkExecution({ ok: false, error: 'boom' })).toMatchObject({
      category: 'execution:internal',
      message: 'boom',
    });
    expect(checkExecution({ ok: false, error: null }).category).toBe('execution:internal');
    expect(checkExecution({ ok: false, error: { code: 42 } }).category).toBe('execution:internal');
    // Node's own error codes are faults of the run (here: a module that failed to load), not tool errors.
    const linkFailure = Object.assign(new Error("request for './compiler.js' is not in cache"), {
      code: 'ERR_VM_MODULE_LINK_FAILURE',
    });
    expect(checkExecution({ ok: false, error: linkFailure }).category).toBe('execution:internal');
    expect(
      checkExecution({ ok: false, error: Object.assign(new Error('out of memory'), { code: 'ENOMEM' }) }).category,
    ).toBe('execution:internal');
  });
});
