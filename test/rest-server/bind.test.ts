import type { ParameterSpec } from '../../generators/rest/spec.js';
import { bindPlaceholders, PlaceholderError } from '../../runtime/rest/bind.js';

/** The interim placeholder binder: `:name` → `?` only in SQL code, values bound in order. */

const p = (name: string, type: ParameterSpec['type'], required = true): ParameterSpec => ({ name, type, description: name, required });

test('replaces each placeholder by ? and binds its value, repeated names repeated', () => {
  expect(bindPlaceholders('SELECT * FROM t WHERE a = :a AND (b > :b OR a <> :a)', { a: 'x', b: 2.5 }, [p('a', 'string'), p('b', 'number')])).toEqual({
    sql: 'SELECT * FROM t WHERE a = ? AND (b > ? OR a <> ?)',
    params: ['x', 2.5, 'x'],
  });
});

test('leaves string literals, quoted identifiers and comments alone', () => {
  const sql = `SELECT ':a', "x:a", \`y:a\`, [z:a], 'it''s :a' -- :a\n, /* :a */ :a FROM t WHERE c = 'a?b' AND d = 'x@y $z'`;
  const bound = bindPlaceholders(sql, { a: 1 }, [p('a', 'integer')]);
  expect(bound.params).toEqual([1]);
  expect(bound.sql).toBe(sql.replace(/ :a FROM/, ' ? FROM'));
});

test('booleans bind as 1/0; an absent optional argument binds NULL', () => {
  expect(bindPlaceholders('SELECT :f, :g, :h', { f: true, g: false }, [p('f', 'boolean'), p('g', 'boolean'), p('h', 'string', false)]).params).toEqual([
    1,
    0,
    null,
  ]);
});

test('refuses undeclared placeholders and arguments, missing required ones, wrong types and other markers', () => {
  expect(() => bindPlaceholders('SELECT :b', {}, [p('a', 'string')])).toThrow(PlaceholderError);
  expect(() => bindPlaceholders('SELECT :a', { a: 'x', z: 1 }, [p('a', 'string')])).toThrow(/'z' is not a declared parameter/);
  expect(() => bindPlaceholders('SELECT :a', {}, [p('a', 'string')])).toThrow(/required parameter 'a' is missing/);
  expect(() => bindPlaceholders('SELECT :a', { a: 1.5 }, [p('a', 'integer')])).toThrow(/must be of type integer/);
  expect(() => bindPlaceholders('SELECT :a', { a: '1' }, [p('a', 'number')])).toThrow(/must be of type number/);
  for (const sql of ['SELECT ?', 'SELECT ?1', 'SELECT @a', 'SELECT $a']) {
    expect(() => bindPlaceholders(sql, {}, [])).toThrow(/only :name placeholders/);
  }
  // `$` inside an unquoted identifier is not a marker.
  expect(bindPlaceholders('SELECT a$b FROM t', {}, []).sql).toBe('SELECT a$b FROM t');
});
