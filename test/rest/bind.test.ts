import { describe, expect, test } from '@jest/globals';
import { BindError, bindPlaceholders } from '../../runtime/rest/bind.js';
import type { ParameterSpec } from '../../runtime/rest/spec.js';

const p = (name: string, type: ParameterSpec['type'], required = true): ParameterSpec => ({
  name,
  type,
  description: name,
  required,
});

describe('bindPlaceholders', () => {
  test('named placeholders become positional, values in order, repeats bound twice', () => {
    const bound = bindPlaceholders(
      'SELECT a FROM t WHERE b = :name AND c > :min AND d <> :name',
      { name: 'x', min: 3 },
      [p('name', 'string'), p('min', 'integer')],
    );
    expect(bound).toEqual({ sql: 'SELECT a FROM t WHERE b = ? AND c > ? AND d <> ?', params: ['x', 3, 'x'] });
  });

  test('placeholders inside strings, quoted identifiers and comments are untouched', () => {
    const sql = 'SELECT ":a", `:a`, [:a] FROM t WHERE b = \':a\' AND c = :a -- :a\n/* :a */';
    expect(bindPlaceholders(sql, { a: 1 }, [p('a', 'integer')])).toEqual({
      sql: 'SELECT ":a", `:a`, [:a] FROM t WHERE b = \':a\' AND c = ? -- :a\n/* :a */',
      params: [1],
    });
  });

  test('values are coerced to the declared type; booleans bind as 1/0; optional ones as NULL', () => {
    const params = [p('n', 'integer'), p('r', 'number'), p('b', 'boolean'), p('s', 'string'), p('o', 'string', false)];
    expect(bindPlaceholders('SELECT :n, :r, :b, :s, :o', { n: '7', r: '2.5', b: true, s: 12 }, params).params).toEqual([
      7,
      2.5,
      1,
      '12',
      null,
    ]);
  });

  test('bad arguments throw BindError', () => {
    expect(() => bindPlaceholders('SELECT :n', {}, [p('n', 'integer')])).toThrow(BindError);
    expect(() => bindPlaceholders('SELECT :n', { n: 1.5 }, [p('n', 'integer')])).toThrow(BindError);
    expect(() => bindPlaceholders('SELECT :n', { n: 'x' }, [p('n', 'number')])).toThrow(BindError);
    expect(() => bindPlaceholders('SELECT :n', { n: 1, m: 2 }, [p('n', 'integer')])).toThrow(/unknown argument m/);
    expect(() => bindPlaceholders('SELECT :m', {}, [])).toThrow(/undeclared/);
    expect(() => bindPlaceholders('SELECT ?', {}, [])).toThrow(/unsupported placeholder/);
  });

  test("only :name placeholders: SQLite's other markers are refused, a $ inside an identifier is not one", () => {
    for (const sql of ['SELECT ?', 'SELECT ?1', 'SELECT @a', 'SELECT $a']) {
      expect(() => bindPlaceholders(sql, {}, [])).toThrow(/unsupported placeholder/);
    }
    expect(bindPlaceholders('SELECT a$b FROM t', {}, []).sql).toBe('SELECT a$b FROM t');
  });
});
