import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import path from 'node:path';
import type { DatabaseInfo } from '../../core/model.js';
import { describeParameterValues, withValues } from '../../generators/rest/parameter-values.js';
import { synthesizeFromTemplate } from '../../generators/rest/template.js';
import { dedupEndpoints, enumsCoveringCalls, type DedupResult } from '../../generators/rest/dedup.js';
import type { EndpointSpec, ParameterSpec } from '../../runtime/rest/spec.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';
import { instance } from './fixtures.js';

/**
 * A shop whose orders have a status held by many rows (categorical), a city held by few
 * (names, not categories), a NOCASE channel, dates, amounts, and an empty text: what each
 * parameter's description and enum must say is decided by these rows.
 */
const SQL = `
  CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
  CREATE TABLE orders (
    id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id), status TEXT,
    channel TEXT COLLATE NOCASE, placed DATE, amount REAL, note TEXT
  );
  INSERT INTO customer VALUES (1, 'Ada', 'Lyon'), (2, 'Bo', 'Oslo'), (3, 'Cy', 'Rome');
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
  INSERT INTO orders SELECT i, 1 + i % 3,
    CASE WHEN i % 5 = 0 THEN 'returned' WHEN i % 2 = 0 THEN 'shipped' ELSE 'open' END,
    CASE WHEN i % 2 = 0 THEN 'web' ELSE 'shop' END,
    printf('2024-01-%02d', i), i * 2.5, CASE WHEN i < 20 THEN '' ELSE 'gift' || i END FROM n;
`;

const col = (name: string, type: string, collation?: string) => ({
  name,
  type,
  description: name,
  valueDescription: '',
  ...(collation ? { collation } : {}),
});

let db: DatabaseInfo;
let executor: SqlExecutor;
beforeAll(() => {
  db = {
    dbId: 'shop',
    path: createDb(path.join(tempDir('nl2api-values-'), 'shop.sqlite'), SQL),
    fingerprint: 'test',
    tables: [
      {
        name: 'customer',
        columns: [col('id', 'INTEGER'), col('name', 'TEXT'), col('city', 'TEXT')],
        primaryKey: ['id'],
        foreignKeys: [],
      },
      {
        name: 'orders',
        columns: [
          col('id', 'INTEGER'),
          col('customer_id', 'INTEGER'),
          col('status', 'TEXT'),
          col('channel', 'TEXT', 'NOCASE'),
          col('placed', 'DATE'),
          col('amount', 'REAL'),
          col('note', 'TEXT'),
        ],
        primaryKey: ['id'],
        foreignKeys: [{ column: 'customer_id', refTable: 'customer', refColumn: 'id' }],
      },
    ],
  };
  executor = createDirectExecutor();
});
afterAll(async () => {
  await executor.close();
  removeTempDirs();
});

async function described(sql: string): Promise<{ spec: EndpointSpec; param: (name: string) => ParameterSpec }> {
  const outcome = synthesizeFromTemplate(instance(sql), db, 'test');
  if (!outcome.ok) throw new Error(outcome.message);
  const spec = await describeParameterValues(outcome.value.spec, outcome.value.call.arguments, db, executor, 5000);
  return { spec, param: (name) => spec.parameters.find((p) => p.name === name)! };
}

describe('describeParameterValues', () => {
  test('a categorical column: its values listed and declared as the enum, in value order', async () => {
    const { param } = await described("SELECT COUNT(*) FROM orders WHERE status = 'shipped'");
    expect(param('status').enum).toEqual(['open', 'returned', 'shipped']);
    expect(param('status').description).toMatch(/column orders\.status; text, one of "open", "returned", "shipped"$/);
  });

  test('a column of names held once or twice each is no category: the most frequent values as examples', async () => {
    const { param } = await described("SELECT name FROM customer WHERE city = 'Oslo'");
    expect(param('city').enum).toBeUndefined();
    expect(param('city').description).toMatch(/; text, e\.g\. "Lyon", "Oslo", "Rome"$/);
  });

  test('no enum where the question asks for a value the column lacks, nor on a NOCASE column', async () => {
    expect((await described("SELECT COUNT(*) FROM orders WHERE status = 'lost'")).param('status').enum).toBeUndefined();
    const channel = (await described("SELECT COUNT(*) FROM orders WHERE channel = 'web'")).param('channel');
    expect(channel.enum).toBeUndefined();
    expect(channel.description).toMatch(/e\.g\. "shop", "web"$/);
  });

  test('a bound: the type and the range the column holds; a date says its form', async () => {
    const { param } = await described("SELECT id FROM orders WHERE amount > 10 AND placed >= '2024-01-05'");
    expect(param('min_amount').description).toMatch(/; a number; the column holds 2\.5 to 75$/);
    expect(param('min_placed').description).toMatch(
      /; a date \(YYYY-MM-DD\); the column holds "2024-01-01" to "2024-01-30"$/,
    );
  });

  test('a date read through STRFTIME: the form the format gives it, and the values it makes of the column', async () => {
    const { spec } = await described("SELECT COUNT(*) FROM orders WHERE STRFTIME('%Y-%m', placed) = '2024-01'");
    expect(spec.parameters[0].description).toMatch(/; text \(YYYY-MM\), e\.g\. "2024-01"$/);
    expect(spec.parameters[0].enum).toBeUndefined();
  });

  test('no enum when a value is longer than a spec may list (the spec would fail its own schema)', () => {
    const param = { name: 'note', type: 'string' as const, description: 'Value of note to match', required: true };
    const long = 'x'.repeat(501);
    const values = { frequent: ['a', long], categories: ['a', long], min: 'a', max: long };
    expect(withValues(param, '=', values, 'a').enum).toBeUndefined();
    expect(withValues(param, '=', { ...values, categories: ['a', 'b'] }, 'a').enum).toEqual(['a', 'b']);
  });

  test('an empty text is no example', async () => {
    const { param } = await described("SELECT id FROM orders WHERE note = 'gift21'");
    expect(param('note').description).toMatch(/; text, e\.g\. "gift20", "gift21", "gift22"$/);
  });

  test("a parameter inside a subquery over another table is described with that table's column and values", async () => {
    const { param } = await described(
      "SELECT amount FROM orders WHERE customer_id = (SELECT id FROM customer WHERE name = 'Bo')",
    );
    expect(param('customer_name').description).toMatch(
      /^Value of the name of customer to match; column customer\.name; text, e\.g\. "Ada", "Bo", "Cy"$/,
    );
  });

  test('once merged, an enum that a merged call steps outside of is dropped', async () => {
    const one = synthesizeFromTemplate(instance("SELECT COUNT(*) FROM orders WHERE status = 'open'", '1'), db, 'test');
    const two = synthesizeFromTemplate(instance("SELECT COUNT(*) FROM orders WHERE status = 'lost'", '2'), db, 'test');
    if (!one.ok || !two.ok) throw new Error('synthesis failed');
    const spec = await describeParameterValues(one.value.spec, one.value.call.arguments, db, executor, 5000);
    expect(spec.parameters[0].enum).toBeDefined();
    const covered = (result: DedupResult) => enumsCoveringCalls(result.canonical, result.calls);
    const alone = dedupEndpoints([{ instanceId: '1', endpoint: { ...one.value, spec } }], db);
    expect(covered(alone)[0].parameters[0].enum).toEqual(['open', 'returned', 'shipped']);
    const merged = dedupEndpoints(
      [
        { instanceId: '1', endpoint: { ...one.value, spec } },
        { instanceId: '2', endpoint: two.value },
      ],
      db,
    );
    expect(merged.canonical).toHaveLength(1);
    expect(covered(merged)[0].parameters[0].enum).toBeUndefined();
  });
});
