import type { Query } from '../../generators/sql/ast.js';
import { parseQuery } from '../../generators/sql/normalize.js';
import { SCHEMA } from '../decompose/schema.js';

/**
 * Every way SQLite quotes a name reads as the same name: "double", `backtick` and [bracket]
 * quotes, also in statements only the mysql grammar reads (its qualifiers come as
 * quoted-identifier nodes, not strings: they once crashed name resolution).
 */

function query(sql: string): Query {
  const parsed = parseQuery(sql, SCHEMA);
  if (!parsed.ok) throw new Error(`${parsed.category}: ${parsed.message}`);
  return parsed.value.query;
}

test('double quotes, backticks and brackets name the same columns and tables', () => {
  const plain = query('SELECT T1.name, T1."Free Meals" FROM school AS T1 WHERE T1.City = \'Fresno\'');
  expect(query("SELECT `T1`.`name`, `T1`.`Free Meals` FROM `school` AS `T1` WHERE `T1`.`City` = 'Fresno'")).toEqual(
    plain,
  );
  expect(query("SELECT [T1].[name], [T1].[Free Meals] FROM [school] AS [T1] WHERE [T1].[City] = 'Fresno'")).toEqual(
    plain,
  );
  // A bracket inside a string literal stays text.
  const where = query("SELECT name FROM school WHERE name = '[Alder]'");
  expect(where.kind === 'select' && where.where).toMatchObject({ right: { kind: 'literal', value: '[Alder]' } });
});

test.each([
  ['a window function', 'SELECT `T1`.`name`, RANK() OVER (ORDER BY `T1`.`students` DESC) FROM school AS `T1`'],
  [
    'EXCEPT after GROUP BY ... HAVING',
    'SELECT `T1`.`name` FROM school AS `T1` GROUP BY `T1`.`id` HAVING COUNT(`T1`.`id`) > 0 EXCEPT SELECT `T2`.`name` FROM school AS `T2` WHERE `T2`.`students` > 200',
  ],
  ['a qualified star', 'SELECT `T1`.*, RANK() OVER (ORDER BY `T1`.`id`) FROM school AS `T1`'],
])('backtick qualifiers in SQL only the mysql grammar reads: %s', (_, sql) => {
  const parsed = parseQuery(sql, SCHEMA);
  expect(parsed).toMatchObject({ ok: true, value: { dialect: 'mysql' } });
});

test('an unknown backtick-quoted qualifier is a parse_error naming it', () => {
  expect(parseQuery('SELECT `T9`.`name`, RANK() OVER (ORDER BY `T1`.`id`) FROM school AS `T1`', SCHEMA)).toMatchObject({
    ok: false,
    category: 'parse_error',
    message: expect.stringContaining('T9.name'),
  });
});
