import Database from 'better-sqlite3';
import { parseQuery } from '../../generators/sql/normalize.js';
import { decompose } from '../../generators/slot/decompose.js';
import type { SlotSequence, ToolOutput, ToolPool } from '../../core/model.js';
import { executeSequence } from '../../runtime/slot/index.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { compareWithGold } from '../../verifiers/compare.js';
import { createDatabase, SCHEMA } from './schema.js';

function sequence(sql: string, pool: ToolPool = 'extended'): SlotSequence {
  const parsed = parseQuery(sql, SCHEMA);
  if (!parsed.ok) throw new Error(parsed.message);
  const outcome = decompose(parsed.value, SCHEMA, pool);
  if (!outcome.ok) throw new Error(`${outcome.category}: ${outcome.message}`);
  return outcome.value;
}

function rejection(sql: string, pool: ToolPool = 'extended'): string {
  const parsed = parseQuery(sql, SCHEMA);
  if (!parsed.ok) throw new Error(parsed.message);
  const outcome = decompose(parsed.value, SCHEMA, pool);
  if (outcome.ok) throw new Error(`accepted: ${JSON.stringify(outcome.value.calls)}`);
  return outcome.category;
}

/** `name:label` of every call, for structural comparison. */
function shape(seq: SlotSequence): string[] {
  return seq.calls.map((c) => `${c.name}:${c.label}`);
}

function call(seq: SlotSequence, label: string): Record<string, unknown> {
  const found = seq.calls.find((c) => c.label === label);
  if (!found) throw new Error(`no call ${label}`);
  return found.arguments;
}

describe('decompose: FROM', () => {
  test('one table: starting_table_var with no joins', () => {
    const seq = sequence('SELECT name FROM school');
    expect(seq.initialization).toEqual([
      { name: 'initialize_active_data', label: 'starting_table_var', arguments: { database: 'schools', tables: [{ alias: 'school', table: 'school' }], joins: [] } },
    ]);
    expect(shape(seq)).toEqual(['retrieve_data:SELECT_1']);
    expect(call(seq, 'SELECT_1')).toEqual({ data_source: '$starting_table_var$', key_name: 'school_name', distinct: false });
    expect(seq.answerLabels).toEqual(['SELECT_1']);
  });

  test('joins become initialize_active_data joins; other ON conjuncts become filters', () => {
    const seq = sequence("SELECT T1.name FROM school AS T1 JOIN score AS T2 ON T1.id = T2.school_id AND T2.subject = 'math'");
    expect(seq.initialization[0].arguments).toEqual({
      database: 'schools',
      tables: [{ alias: 'T1', table: 'school' }, { alias: 'T2', table: 'score' }],
      joins: [{ type: 'inner', alias: 'T2', on: [{ left: 'T1.id', right: 'T2.school_id' }] }],
    });
    expect(call(seq, 'FILTER_1')).toMatchObject({ key_name: 'score_subject', condition: 'equal_to', value: 'math' });
  });

  test('a self join keys the second occurrence <table>_2_<column>', () => {
    const seq = sequence('SELECT b.name FROM school AS a JOIN school AS b ON a.id = b.students');
    expect(call(seq, 'SELECT_1')).toMatchObject({ key_name: 'school_2_name' });
  });
});

describe('decompose: WHERE', () => {
  test('AND chains filters; literal on the left is flipped', () => {
    const seq = sequence("SELECT name FROM school WHERE 100 < students AND City = 'Fresno'");
    expect(shape(seq)).toEqual(['filter_data:FILTER_1', 'filter_data:FILTER_2', 'retrieve_data:SELECT_1']);
    expect(call(seq, 'FILTER_1')).toEqual({ data_source: '$starting_table_var$', key_name: 'school_students', condition: 'greater_than', value: 100 });
    expect(call(seq, 'FILTER_2')).toMatchObject({ data_source: '$FILTER_1$', key_name: 'school_City' });
  });

  test('OR: one filter per branch from the same table, then union_data', () => {
    const seq = sequence("SELECT name FROM school WHERE City = 'Fresno' OR students > 400");
    expect(shape(seq)).toEqual(['filter_data:FILTER_1', 'filter_data:FILTER_2', 'union_data:UNION_1', 'retrieve_data:SELECT_1']);
    expect(call(seq, 'FILTER_2')).toMatchObject({ data_source: '$starting_table_var$' });
    expect(call(seq, 'UNION_1')).toEqual({ data_source: '$FILTER_1$', other_data_source: '$FILTER_2$' });
  });

  test('NOT is pushed down (De Morgan, inverted comparisons)', () => {
    const seq = sequence("SELECT name FROM school WHERE NOT (students >= 100 OR name LIKE 'A%')");
    expect(seq.calls.slice(0, 2).map((c) => c.arguments.condition)).toEqual(['less_than', 'not_like']);
  });

  test('IN list, BETWEEN, IS NULL', () => {
    const seq = sequence('SELECT name FROM school WHERE id IN (1, 2) AND students BETWEEN 100 AND 300 AND City IS NULL');
    expect(seq.calls.slice(0, 4).map((c) => [c.arguments.condition, c.arguments.value])).toEqual([
      ['in', [1, 2]], ['greater_than_equal_to', 100], ['less_than_equal_to', 300], ['is_null', undefined],
    ]);
  });

  test('an expression is computed by transform_data before the filter', () => {
    const seq = sequence("SELECT name FROM school WHERE strftime('%Y', founded) = '1990'");
    expect(shape(seq)).toEqual(['transform_data:DATETIME_1', 'filter_data:FILTER_1', 'retrieve_data:SELECT_1']);
    expect(call(seq, 'DATETIME_1')).toMatchObject({ key_name: 'school_founded', operation_type: 'datetime', operation_args: { pattern: '%Y' } });
    expect(call(seq, 'FILTER_1')).toMatchObject({ key_name: 'school_founded_datetime', value: '1990' });
  });

  test('column vs column: a comparison column, then filter equal_to 1', () => {
    const seq = sequence('SELECT name FROM school WHERE students > id');
    expect(call(seq, 'GREATER_THAN_1')).toMatchObject({ key_name: 'school_students', operation_args: { operand: { key_name: 'school_id' } } });
    expect(call(seq, 'FILTER_1')).toMatchObject({ key_name: 'school_students_greater_than', condition: 'equal_to', value: 1 });
  });

  test('scalar subquery: a nested sequence referenced as $LABEL$, initialization reused', () => {
    const seq = sequence('SELECT name FROM school WHERE students = (SELECT MAX(students) FROM school)');
    expect(seq.initialization).toHaveLength(1);
    expect(shape(seq)).toEqual(['aggregate_data:MAX_1', 'filter_data:FILTER_1', 'retrieve_data:SELECT_1']);
    expect(call(seq, 'FILTER_1')).toMatchObject({ value: '$MAX_1$' });
  });

  test('IN subquery over other tables: its own initialization starting_table_var_2', () => {
    const seq = sequence("SELECT name FROM school WHERE id IN (SELECT school_id FROM score WHERE subject = 'read')");
    expect(seq.initialization.map((c) => c.label)).toEqual(['starting_table_var', 'starting_table_var_2']);
    expect(call(seq, 'FILTER_1')).toMatchObject({ data_source: '$starting_table_var_2$' });
    expect(call(seq, 'FILTER_2')).toMatchObject({ condition: 'in', value: '$SELECT_1$' });
  });
});

describe('decompose: GROUP BY, HAVING, ORDER BY, SELECT', () => {
  test('group, aggregate, having filter, sort, retrieve with limit', () => {
    const seq = sequence('SELECT City FROM school GROUP BY City HAVING COUNT(*) > 1 ORDER BY SUM(students) DESC LIMIT 1');
    expect(shape(seq)).toEqual([
      'group_data_by:GROUP_1', 'aggregate_data:SUM_1', 'aggregate_data:COUNT_1', 'filter_data:FILTER_1', 'sort_data:SORT_1', 'retrieve_data:SELECT_1',
    ]);
    expect(call(seq, 'COUNT_1')).toMatchObject({ key_name: '*', aggregation_type: 'count' });
    expect(call(seq, 'FILTER_1')).toMatchObject({ key_name: 'count_rows', condition: 'greater_than', value: 1 });
    expect(call(seq, 'SORT_1')).toMatchObject({ key_name: 'sum_school_students', ascending: false });
    expect(call(seq, 'SELECT_1')).toMatchObject({ key_name: 'school_City', limit: 1 });
  });

  test('ORDER BY several keys sorts last key first', () => {
    const seq = sequence('SELECT name FROM school ORDER BY City, students DESC');
    expect(seq.calls.filter((c) => c.name === 'sort_data').map((c) => [c.arguments.key_name, c.arguments.ascending])).toEqual([
      ['school_students', false], ['school_City', true],
    ]);
  });

  test('ungrouped aggregates are scalars; arithmetic over them is calculate; 1.0 is a cast', () => {
    const seq = sequence('SELECT CAST(SUM(students) AS REAL) / COUNT(id), MAX(students) * 1.0 FROM school');
    expect(shape(seq)).toEqual([
      'aggregate_data:SUM_1', 'calculate:CALC_CAST_1', 'aggregate_data:COUNT_1', 'calculate:CALC_DIVIDE_1',
      'aggregate_data:MAX_1', 'calculate:CALC_CAST_2', 'calculate:CALC_MULTIPLY_1',
    ]);
    expect(call(seq, 'CALC_DIVIDE_1')).toEqual({ value: '$CALC_CAST_1$', operation_type: 'divide', operation_args: { operand: { value: '$COUNT_1$' } } });
    expect(seq.answerLabels).toEqual(['CALC_DIVIDE_1', 'CALC_MULTIPLY_1']);
  });

  test('CASE/IIF inside an aggregate: transform_data chain, then the aggregate', () => {
    const seq = sequence("SELECT SUM(IIF(City = 'Fresno', 1, 0)) FROM school");
    expect(shape(seq)).toEqual(['transform_data:EQUAL_TO_1', 'transform_data:IF_THEN_ELSE_1', 'aggregate_data:SUM_1']);
    expect(call(seq, 'IF_THEN_ELSE_1')).toMatchObject({ key_name: 'school_City_equal_to', operation_args: { then: { value: 1 }, else: { value: 0 } } });
  });

  test('multi-column DISTINCT: select_unique_values with a key list', () => {
    const seq = sequence('SELECT DISTINCT City, students FROM school');
    expect(call(seq, 'UNIQUE_1')).toMatchObject({ key_name: ['school_City', 'school_students'] });
    expect(seq.answerLabels).toEqual(['UNIQUE_1']);
  });

  test('a column beside a single MAX comes from the argmax row', () => {
    const seq = sequence('SELECT name, MAX(students) FROM school');
    expect(shape(seq)).toEqual(['aggregate_data:ARGMAX_1', 'retrieve_data:SELECT_1', 'retrieve_data:SELECT_2']);
  });

  test('a derived table joined on a key it holds once is a semijoin filter', () => {
    const seq = sequence('SELECT T1.name FROM school AS T1 JOIN (SELECT school_id FROM score GROUP BY school_id) AS T2 ON T1.id = T2.school_id');
    expect(shape(seq)).toEqual(['group_data_by:GROUP_1', 'retrieve_data:SELECT_1', 'filter_data:FILTER_1', 'retrieve_data:SELECT_2']);
    expect(call(seq, 'FILTER_1')).toMatchObject({ key_name: 'school_id', condition: 'in', value: '$SELECT_1$' });
  });

  test('derived table: the outer query continues on its rows', () => {
    const seq = sequence('SELECT COUNT(t.City) FROM (SELECT City, COUNT(id) AS n FROM school GROUP BY City) AS t WHERE t.n > 1');
    expect(shape(seq)).toEqual(['group_data_by:GROUP_1', 'aggregate_data:COUNT_1', 'select_unique_values:UNIQUE_1', 'filter_data:FILTER_1', 'aggregate_data:COUNT_2']);
  });

  test('output is deterministic', () => {
    const sql = "SELECT City, AVG(students) FROM school WHERE name LIKE '%e%' OR id > 2 GROUP BY City ORDER BY 2 DESC";
    expect(JSON.stringify(sequence(sql))).toBe(JSON.stringify(sequence(sql)));
  });
});

describe('decompose: SELECT without FROM, compound SELECTs, date/time modifiers', () => {
  test('values of nested SELECTs combined by calculate; a whole-column nested SELECT is its first row', () => {
    const seq = sequence("SELECT (SELECT students FROM school WHERE name = 'Cedar') - (SELECT students FROM school WHERE name = 'Elm')");
    expect(seq.initialization).toHaveLength(1);
    const calc = seq.calls.find((c) => c.name === 'calculate')!;
    expect(calc.arguments).toMatchObject({ operation_type: 'subtract', operation_args: { operand: { value: expect.stringMatching(/^\$SELECT_\d+\$$/) } } });
    expect(seq.answerLabels).toEqual([calc.label]);
    const first = sequence('SELECT (SELECT name FROM school)');
    expect(call(first, first.answerLabels[0])).toMatchObject({ limit: 1 });
  });

  test('members projected, then combine_data; the compound ORDER BY sorts the combined rows', () => {
    const seq = sequence("SELECT name FROM school WHERE City = 'Fresno' EXCEPT SELECT name FROM school WHERE students > 200 ORDER BY 1 DESC");
    expect(shape(seq)).toEqual(['filter_data:FILTER_1', 'retrieve_data:SELECT_1', 'filter_data:FILTER_2', 'retrieve_data:SELECT_2', 'combine_data:COMBINE_1', 'sort_data:SORT_1', 'retrieve_data:SELECT_3']);
    expect(call(seq, 'COMBINE_1')).toEqual({ data_source: '$SELECT_1$', other_data_source: '$SELECT_2$', operation: 'except' });
    expect(call(seq, 'SORT_1')).toEqual({ data_source: '$COMBINE_1$', key_name: 'school_name', ascending: false });
    const two = sequence('SELECT name, City FROM school UNION SELECT subject, takers FROM score');
    expect(shape(two)).toEqual(['select_unique_values:UNIQUE_1', 'select_unique_values:UNIQUE_2', 'combine_data:COMBINE_1']);
    expect(two.answerLabels).toEqual(['COMBINE_1']);
  });

  test('DATE/DATETIME/TIME/STRFTIME modifiers become datetime operation_args.modifiers', () => {
    const seq = sequence("SELECT name FROM school WHERE date(founded, '+1 day', 'start of year') > '2000'");
    expect(call(seq, 'DATETIME_1')).toMatchObject({ key_name: 'school_founded', operation_type: 'datetime', operation_args: { pattern: '%Y-%m-%d', modifiers: ['+1 day', 'start of year'] } });
    expect(call(sequence("SELECT strftime('%Y', founded) FROM school", 'paper'), 'DATETIME_1').operation_args).toEqual({ pattern: '%Y' });
  });
});

describe('decompose: rejections', () => {
  test.each([
    ['SELECT name FROM school AS s WHERE EXISTS (SELECT 1 FROM score WHERE school_id = s.id)', 'unsupported:correlated_subquery'],
    ['SELECT name, RANK() OVER (ORDER BY students) FROM school', 'unsupported:window_function'],
    ['SELECT name, students FROM school UNION ALL SELECT subject, takers FROM score', 'unsupported:union_all_columns'],
    ['SELECT COUNT(*) FROM school UNION SELECT COUNT(*) FROM score', 'unsupported:compound_aggregate'],
    ["SELECT name FROM school LEFT JOIN score ON id = school_id AND subject = 'math'", 'unsupported:left_join_on_filter'],
    ['SELECT name, COUNT(id) FROM school', 'unsupported:bare_column'],
    // A derived table joined to tables: only as an exact semijoin.
    ['SELECT T1.name, T2.n FROM school AS T1 JOIN (SELECT school_id, COUNT(*) AS n FROM score GROUP BY school_id) AS T2 ON T1.id = T2.school_id', 'unsupported:derived_join'],
    ['SELECT T1.name FROM school AS T1 JOIN (SELECT school_id FROM score) AS T2 ON T1.id = T2.school_id', 'unsupported:derived_join'],
    ['SELECT T1.name FROM school AS T1 JOIN (SELECT subject FROM score GROUP BY subject) AS T2 ON T1.id = T2.subject', 'unsupported:derived_join'],
    ['SELECT T1.name FROM school AS T1 LEFT JOIN (SELECT MAX(students) AS m FROM school) AS T2 ON T1.students = T2.m', 'unsupported:derived_join'],
    ['SELECT T1.name FROM school AS T1 JOIN (SELECT school_id FROM score GROUP BY school_id) AS T2 ON T1.id = T2.school_id ORDER BY T1.City', 'unsupported:derived_join'],
    ['SELECT GROUP_CONCAT(name) FROM school', 'unsupported:aggregate_group_concat'],
    ['SELECT instr(name, 1) FROM school', 'unsupported:function_instr'],
    ['SELECT 1', 'unsupported:constant_select'],
    ['SELECT COUNT(*)', 'unsupported:no_from'],
    ['SELECT (SELECT MAX(students) FROM school) WHERE 1', 'unsupported:no_from'],
    ['SELECT DATETIME() FROM school', 'unsupported:current_time'],
    ["SELECT date(founded, 'localtime') FROM school", 'unsupported:time_zone'],
    ['SELECT date(founded, City) FROM school', 'unsupported:function_datetime'],
    ["SELECT name FROM school WHERE founded < CURRENT_TIMESTAMP", 'unsupported:current_time'],
    ["SELECT name FROM school WHERE JULIANDAY('now') - JULIANDAY(founded) > 365", 'unsupported:current_time'],
  ])('%s -> %s', (sql, category) => {
    expect(rejection(sql)).toBe(category);
  });
});

describe('decompose: paper pool', () => {
  test('filters, group, aggregate, sort, retrieve, substring stay available', () => {
    const seq = sequence("SELECT City FROM school WHERE substr(name, 1, 1) = 'A' GROUP BY City ORDER BY COUNT(id) DESC LIMIT 1", 'paper');
    expect(call(seq, 'SUBSTRING_1')).toMatchObject({ operation_args: { start_index: 0, end_index: 1 } });
    expect(seq.calls.every((c) => ['filter_data', 'sort_data', 'retrieve_data', 'aggregate_data', 'group_data_by', 'select_unique_values', 'transform_data'].includes(c.name))).toBe(true);
  });

  test.each([
    ["SELECT name FROM school WHERE City = 'Fresno' OR id = 1", 'unsupported:or'],
    ['SELECT name FROM school WHERE students = (SELECT MAX(students) FROM school)', 'unsupported:subquery'],
    ['SELECT IIF(students > 100, 1, 0) FROM school', 'unsupported:case'],
    ['SELECT CAST(students AS REAL) FROM school', 'unsupported:cast'],
    ['SELECT students / 2 FROM school', 'unsupported:arithmetic'],
    ['SELECT name FROM school WHERE id IN (1, 2)', 'unsupported:in'],
    ['SELECT name FROM school WHERE City IS NULL', 'unsupported:null_check'],
    ['SELECT City, founded FROM school GROUP BY City, founded', 'unsupported:multi_key'],
    ['SELECT name FROM school WHERE students > id', 'unsupported:column_comparison'],
    ['SELECT name FROM school LIMIT 1 OFFSET 2', 'unsupported:offset'],
    ['SELECT name FROM school UNION SELECT subject FROM score', 'unsupported:union'],
    ['SELECT name FROM school EXCEPT SELECT subject FROM score', 'unsupported:except'],
    ["SELECT date(founded, '+1 day') FROM school", 'unsupported:function_datetime'],
  ])('%s -> %s', (sql, category) => {
    expect(rejection(sql, 'paper')).toBe(category);
  });
});

describe('decompose: executed sequences equal the SQL result', () => {
  const { db, cleanup } = createDatabase();
  const executor = createDirectExecutor();
  const sqlite = new Database(db.path, { readonly: true });
  afterAll(async () => {
    sqlite.close();
    await executor.close();
    cleanup();
  });

  test.each([
    "SELECT name FROM school WHERE City = 'Fresno' OR students > 400",
    'SELECT City, COUNT(*) FROM school GROUP BY City HAVING COUNT(*) > 1',
    'SELECT name FROM school ORDER BY City DESC, students LIMIT 3',
    'SELECT CAST(SUM(students) AS REAL) / COUNT(id) FROM school',
    "SELECT SUM(IIF(City = 'Fresno', students, 0)) * 100 / SUM(students) FROM school",
    'SELECT T1.name, T2.avg FROM school AS T1 JOIN score AS T2 ON T1.id = T2.school_id WHERE T2.avg > (SELECT AVG(avg) FROM score)',
    "SELECT name FROM school WHERE id IN (SELECT school_id FROM score WHERE subject = 'read') AND NOT students BETWEEN 100 AND 350",
    'SELECT name, MAX(students) FROM school',
    "SELECT DISTINCT City FROM school WHERE City IS NOT NULL AND substr(founded, 1, 4) > '1989'",
    'SELECT COUNT(t.City) FROM (SELECT City, COUNT(id) AS n FROM school GROUP BY City) AS t WHERE t.n > 1',
    'SELECT name, CASE WHEN students > 250 THEN 1.0 WHEN students > 100 THEN 0.5 ELSE 0 END FROM school',
    'SELECT students / 7, students * 1.0 / 7, 100 - students FROM school',
    "SELECT (SELECT students FROM school WHERE name = 'Cedar') - (SELECT students FROM school WHERE name = 'Elm') AS diff",
    "SELECT (SELECT name FROM school ORDER BY students DESC), (SELECT COUNT(*) FROM score) * 2",
    "SELECT name FROM school WHERE City = 'Fresno' UNION SELECT name FROM school WHERE students > 400",
    'SELECT City FROM school EXCEPT SELECT City FROM school WHERE students < 100',
    'SELECT name, City FROM school INTERSECT SELECT name, City FROM school WHERE students > 100',
    'SELECT name FROM school UNION ALL SELECT subject FROM score ORDER BY 1 DESC LIMIT 4',
    "SELECT City FROM school UNION SELECT subject FROM score EXCEPT SELECT 'math' FROM score ORDER BY 1 LIMIT 2 OFFSET 1",
    "SELECT name FROM school WHERE id IN (SELECT school_id FROM score WHERE subject = 'math' INTERSECT SELECT school_id FROM score WHERE subject = 'read')",
    "SELECT name, date(founded, '+1 month', 'start of month'), strftime('%Y-%m', founded, '-45 days') FROM school",
    "SELECT strftime('%Y', MAX(founded), '+1 year') FROM school",
    'SELECT name FROM school EXCEPT SELECT subject FROM score ORDER BY name DESC',
    'SELECT id, name FROM school UNION SELECT school_id, subject FROM score ORDER BY subject LIMIT 4',
    'SELECT COUNT(T1.name) FROM school AS T1 JOIN (SELECT school_id, COUNT(*) AS n FROM score GROUP BY school_id HAVING n > 1) AS T2 ON T1.id = T2.school_id',
    'SELECT COUNT(DISTINCT T1.City), SUM(T1.students) FROM school AS T1 INNER JOIN (SELECT school_id FROM score GROUP BY school_id ORDER BY SUM(takers) DESC LIMIT 2) AS T2 ON T1.id = T2.school_id',
    'SELECT T1.name FROM school AS T1 JOIN score AS T3 ON T1.id = T3.school_id JOIN (SELECT MAX(avg) AS top FROM score) AS T2 ON T3.avg = T2.top',
  ])('%s', async (sql) => {
    const parsed = parseQuery(sql, db);
    if (!parsed.ok) throw new Error(parsed.message);
    const seq = decompose(parsed.value, db, 'extended');
    if (!seq.ok) throw new Error(seq.message);
    const outputs: ToolOutput[] = await executeSequence(seq.value, db, executor, { timeoutMs: 5000, pool: 'extended' });
    const statement = sqlite.prepare(sql);
    const rows = statement.raw().all() as (number | string | null)[][];
    const gold = { columns: statement.columns().map((c) => c.name), rows, executedSql: sql, ordered: /ORDER BY/i.test(sql), distinct: /DISTINCT/i.test(sql) };
    expect(compareWithGold(outputs, gold)).toMatchObject({ ok: true });
  });
});
