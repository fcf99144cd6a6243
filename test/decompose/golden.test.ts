/**
 * Golden tests of the SLOT decomposer, after sqlglot's optimizer fixtures: each file of
 * test/decompose/golden/ holds the cases of one clause pass of generators/slot/ (from.txt,
 * where.txt, group.txt, select.txt, order.txt, expressions.txt, windows.txt, query.txt,
 * decorrelation.txt), each a SQL query
 * over the schema of test/decompose/schema.ts and the decomposer's verdict on it. Every
 * case is one test; a failure shows the expected and the produced sequence as a line diff.
 *
 * A fixture file is blocks separated by blank lines. A case:
 *
 *   # what the case shows (comment lines; `# pool: paper` decomposes in the paper pool,
 *   # the default is extended; `# data keys: school.name` as if the data proved that column a key)
 *   SELECT name FROM school WHERE City = 'Fresno';      <- the SQL, up to a line ending in ';'
 *   initialize_active_data(database=schools, tables=[{alias: school, table: school}], joins=[]) -> starting_table_var
 *   filter_data(data_source=$starting_table_var$, key_name=school_City, condition=equal_to, value=Fresno) -> FILTER_1
 *   retrieve_data(data_source=$FILTER_1$, key_name=school_name, distinct=false) -> SELECT_1
 *   => SELECT_1                                         <- the answer labels
 *
 * one call a line, `name(argument=value, ...) -> label`, initializations first, arguments in
 * the order the decomposer writes them; values are JSON with the quotes left off strings
 * that read as names (`value="1990"` is text, `value=1990` an integer). A query the
 * decomposer refuses has, instead of calls, one line `rejected: <category>`. A block of
 * comments alone is commentary.
 *
 * Updating: after a deliberate change of the decomposer, or to fill in a new case (write
 * its comments and SQL, leave the expectation out), rewrite every expectation with what the
 * decomposer produces now, then review the diff of test/decompose/golden/ before committing:
 *
 *   NL2API_GOLDEN_UPDATE=1 node --experimental-vm-modules node_modules/jest/bin/jest.js test/decompose/golden
 *
 * Comments and SQL are kept as written. A sequence is golden only if it returns what the SQL
 * returns: never accept an update that encodes a wrong decomposition.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goldenCases, goldenOutput, readGoldenFile, writeGoldenFile } from './golden-fixtures.js';
import { SCHEMA } from './schema.js';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden');
const UPDATE = process.env.NL2API_GOLDEN_UPDATE === '1';
const FILES = fs
  .readdirSync(DIR)
  .filter((name) => name.endsWith('.txt'))
  .sort();

describe.each(FILES)('golden/%s', (name) => {
  const file = path.join(DIR, name);
  const golden = readGoldenFile(file);
  const actual = new Map<number, string>();
  if (UPDATE) afterAll(() => writeGoldenFile(file, golden, actual));

  test.each(goldenCases(golden).map((c) => [`${name}:${c.line} ${c.sql}`, c] as const))('%s', (_title, c) => {
    const output = goldenOutput(c.sql, SCHEMA, c.pool, c.dataKeys);
    if (UPDATE) actual.set(c.line, output);
    else expect(output).toBe(c.expected);
  });
});
