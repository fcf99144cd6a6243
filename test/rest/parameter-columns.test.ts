import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import nodeSqlParser from 'node-sql-parser';
import type { DatabaseInfo, Instance, TableInfo } from '../../core/model.js';
import { synthesizeFromTemplate } from '../../generators/rest/template.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { BIRD_DIR, createDb, removeTempDirs, tempDir } from '../sql/fixtures.js';

/**
 * Every parameter is described with the column its SQL compares it with (issue 33). The
 * columns are found here by a resolver of the test's own, independent of the generator's
 * (which reads tokens): node-sql-parser's tree, walked scope by scope as SQLite resolves
 * names — a SELECT's own FROM tables first, then the enclosing SELECTs' (correlation), a
 * qualifier bound to its own scope's alias, a derived table or CTE opaque.
 */

const { Parser } = nodeSqlParser;
const parser = new Parser();

/* node-sql-parser's tree is loosely typed: read structurally. */
type Node = Record<string, any>;

interface Scope {
  parent: Scope | undefined;
  /** Each FROM item: the names it goes by, and its schema table (null: a derived table or a CTE). */
  items: { names: string[]; table: TableInfo | null }[];
}

/** What a placeholder is compared with: `table.column`, `derived`, or `unresolved`. */
type Compared = Map<string, string>;

function comparedColumns(sql: string, db: DatabaseInfo): Compared | null {
  let ast: Node | Node[];
  try {
    ast = parser.astify(sql, { database: 'sqlite' });
  } catch {
    return null;
  }
  const found: Compared = new Map();
  for (const statement of Array.isArray(ast) ? ast : [ast]) walkSelect(statement, undefined, new Set(), db, found);
  return found;
}

function walkSelect(select: Node, parent: Scope | undefined, ctes: Set<string>, db: DatabaseInfo, found: Compared) {
  const visible = new Set(ctes);
  for (const cte of select.with ?? []) {
    walkSelect(cte.stmt?.ast ?? cte.stmt, parent, visible, db, found);
    visible.add(String(cte.name?.value ?? cte.name).toLowerCase());
  }
  const scope: Scope = { parent, items: [] };
  for (const item of select.from ?? []) {
    if (item.expr?.ast) {
      // A derived table sees no sibling of its FROM clause.
      walkSelect(item.expr.ast, parent, visible, db, found);
      scope.items.push({ names: item.as ? [String(item.as).toLowerCase()] : [], table: null });
    } else if (item.table) {
      const name = String(item.table).toLowerCase();
      const table = visible.has(name) ? null : (db.tables.find((t) => t.name.toLowerCase() === name) ?? null);
      scope.items.push({ names: [name, ...(item.as ? [String(item.as).toLowerCase()] : [])], table });
    }
  }
  for (const item of select.from ?? []) if (item.on) walkExpr(item.on, scope, visible, db, found);
  for (const part of [select.columns, select.where, select.having, select.groupby, select.orderby])
    if (part && part !== '*') walkExpr(part, scope, visible, db, found);
  if (select._next) walkSelect(select._next, parent, ctes, db, found);
}

const COMPARISONS = new Set([
  '=',
  '!=',
  '<>',
  '<',
  '<=',
  '>',
  '>=',
  'LIKE',
  'NOT LIKE',
  'IN',
  'NOT IN',
  'BETWEEN',
  'NOT BETWEEN',
]);

function walkExpr(node: unknown, scope: Scope, ctes: Set<string>, db: DatabaseInfo, found: Compared): void {
  if (Array.isArray(node)) {
    for (const child of node) walkExpr(child, scope, ctes, db, found);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const n = node as Node;
  if (n.ast && typeof n.ast === 'object' && n.ast.type === 'select') {
    walkSelect(n.ast, scope, ctes, db, found);
    return;
  }
  if (n.type === 'select') {
    walkSelect(n, scope, ctes, db, found);
    return;
  }
  if (n.type === 'binary_expr' && COMPARISONS.has(String(n.operator).toUpperCase())) {
    const sides: [Node, Node][] = [
      [n.left, n.right],
      [n.right, n.left],
    ];
    for (const [column, other] of sides) {
      if (column?.type !== 'column_ref') continue;
      const params = other?.type === 'param' ? [other] : other?.type === 'expr_list' ? other.value : [];
      for (const param of params ?? [])
        if (param?.type === 'param' && !found.has(param.value)) found.set(param.value, resolve(column, scope));
    }
  }
  for (const value of Object.values(n)) if (value && typeof value === 'object') walkExpr(value, scope, ctes, db, found);
}

function resolve(ref: Node, scope: Scope): string {
  const name = String(typeof ref.column === 'object' ? ref.column?.expr?.value : ref.column).toLowerCase();
  const qualifier = ref.table ? String(ref.table).toLowerCase() : null;
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    const items = qualifier === null ? s.items : s.items.filter((i) => i.names.includes(qualifier));
    for (const item of items) {
      const column = item.table?.columns.find((c) => c.name.toLowerCase() === name);
      if (column) return `${item.table!.name}.${column.name}`;
    }
    if (items.some((i) => i.table === null)) return 'derived';
    if (qualifier !== null && items.length) return 'unresolved';
  }
  return 'unresolved';
}

/** Whether a description names `column` as the one compared (`…; column League.name[, joined on …]; …`). */
function names(description: string, column: string): boolean {
  const escaped = column.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|; )column ${escaped}($|[;, ])`, 'i').test(description);
}

interface Tally {
  parameters: number;
  checked: number;
  wrong: string[];
  unparsed: number;
}

function tally(endpoints: readonly { id: string; spec: EndpointSpec }[], dbOf: (id: string) => DatabaseInfo): Tally {
  const t: Tally = { parameters: 0, checked: 0, wrong: [], unparsed: 0 };
  for (const { id, spec } of endpoints) {
    t.parameters += spec.parameters.length;
    const compared = comparedColumns(spec.sql, dbOf(id));
    if (!compared) {
      t.unparsed += spec.parameters.length;
      continue;
    }
    for (const p of spec.parameters) {
      const truth = compared.get(p.name);
      if (!truth || truth === 'derived' || truth === 'unresolved') continue;
      t.checked++;
      if (!names(p.description, truth)) t.wrong.push(`${id} ${p.name}: "${p.description}", compared with ${truth}`);
    }
  }
  return t;
}

/**
 * A shop of our own whose questions compare values inside subqueries over other tables,
 * correlated references, aliases reused at every level, CTEs, unions and derived tables:
 * the constructs where a scope-blind reading names the wrong column.
 */
const SHOP_SQL = `
  CREATE TABLE category (category_id INTEGER PRIMARY KEY, name TEXT, parent TEXT);
  CREATE TABLE product (product_id INTEGER PRIMARY KEY, name TEXT, category_id INTEGER REFERENCES category(category_id), price REAL);
  CREATE TABLE store (store_id INTEGER PRIMARY KEY, name TEXT, city TEXT);
  CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, name TEXT, city TEXT);
  CREATE TABLE sale (sale_id INTEGER PRIMARY KEY, product_id INTEGER REFERENCES product(product_id),
    store_id INTEGER REFERENCES store(store_id), customer_id INTEGER REFERENCES customer(customer_id), quantity INTEGER, day DATE);
  INSERT INTO category VALUES (1, 'Toys', 'Kids'), (2, 'Books', 'Media'), (3, 'Games', 'Kids');
  INSERT INTO product VALUES (1, 'Kite', 1, 12.5), (2, 'Atlas', 2, 30), (3, 'Chess', 3, 20), (4, 'Yo-yo', 1, 3);
  INSERT INTO store VALUES (1, 'North', 'Oslo'), (2, 'South', 'Rome');
  INSERT INTO customer VALUES (1, 'Ada', 'Oslo'), (2, 'Bo', 'Lyon');
  INSERT INTO sale VALUES (1, 1, 1, 1, 2, '2024-01-02'), (2, 2, 2, 2, 1, '2024-02-03'), (3, 3, 1, 2, 5, '2024-03-04');
`;
const SHOP_QUESTIONS = [
  "SELECT name FROM product WHERE category_id = (SELECT category_id FROM category WHERE name = 'Toys') ORDER BY price",
  "SELECT name FROM product WHERE category_id IN (SELECT category_id FROM category WHERE parent = 'Kids' AND name <> 'Games')",
  "SELECT T1.name FROM product AS T1 WHERE T1.price > 10 AND T1.category_id IN (SELECT T1.category_id FROM category AS T1 WHERE T1.name = 'Toys')",
  "SELECT name FROM store WHERE store_id IN (SELECT store_id FROM sale WHERE customer_id IN (SELECT customer_id FROM customer WHERE name = 'Bo'))",
  "SELECT name FROM customer AS c WHERE EXISTS (SELECT 1 FROM sale AS s WHERE s.customer_id = c.customer_id AND s.quantity >= 2) AND city = 'Lyon'",
  "SELECT name FROM product AS p WHERE price > (SELECT AVG(price) FROM product WHERE category_id = p.category_id) AND name LIKE 'C%'",
  "SELECT city FROM store WHERE name = 'North' UNION SELECT city FROM customer WHERE name = 'Ada'",
  "WITH kids AS (SELECT category_id FROM category WHERE parent = 'Kids') SELECT name FROM product WHERE category_id IN (SELECT category_id FROM kids) AND price < 15",
  "SELECT T.name FROM (SELECT name, price FROM product WHERE price BETWEEN 5 AND 25) AS T WHERE T.name <> 'Kite'",
  "SELECT COUNT(*) FROM sale AS T1 INNER JOIN store AS T2 ON T1.store_id = T2.store_id WHERE T2.name = 'North' AND T1.day >= '2024-01-01'",
  "SELECT name FROM customer WHERE customer_id NOT IN (SELECT customer_id FROM sale WHERE store_id = (SELECT store_id FROM store WHERE city = 'Rome'))",
  "SELECT SUM(T1.quantity * T2.price) FROM sale AS T1 INNER JOIN product AS T2 ON T1.product_id = T2.product_id WHERE T2.category_id = (SELECT category_id FROM category WHERE name = 'Games')",
  "SELECT name FROM category WHERE category_id IN (SELECT category_id FROM product WHERE name = 'Atlas')",
  "SELECT p.name FROM product AS p INNER JOIN category AS c ON p.category_id = c.category_id WHERE c.name = 'Toys' AND p.name <> 'Kite'",
  "SELECT name FROM store WHERE city = (SELECT city FROM customer WHERE name = 'Ada')",
];

function shopDb(): DatabaseInfo {
  const col = (name: string, type: string) => ({ name, type, description: name, valueDescription: '' });
  const table = (name: string, columns: [string, string][], key: string): TableInfo => ({
    name,
    columns: columns.map(([c, t]) => col(c, t)),
    primaryKey: [key],
    foreignKeys: [],
  });
  return {
    dbId: 'shop',
    path: createDb(path.join(tempDir('nl2api-scopes-'), 'shop.sqlite'), SHOP_SQL),
    fingerprint: 'test',
    tables: [
      table(
        'category',
        [
          ['category_id', 'INTEGER'],
          ['name', 'TEXT'],
          ['parent', 'TEXT'],
        ],
        'category_id',
      ),
      table(
        'product',
        [
          ['product_id', 'INTEGER'],
          ['name', 'TEXT'],
          ['category_id', 'INTEGER'],
          ['price', 'REAL'],
        ],
        'product_id',
      ),
      table(
        'store',
        [
          ['store_id', 'INTEGER'],
          ['name', 'TEXT'],
          ['city', 'TEXT'],
        ],
        'store_id',
      ),
      table(
        'customer',
        [
          ['customer_id', 'INTEGER'],
          ['name', 'TEXT'],
          ['city', 'TEXT'],
        ],
        'customer_id',
      ),
      table(
        'sale',
        [
          ['sale_id', 'INTEGER'],
          ['product_id', 'INTEGER'],
          ['store_id', 'INTEGER'],
          ['customer_id', 'INTEGER'],
          ['quantity', 'INTEGER'],
          ['day', 'DATE'],
        ],
        'sale_id',
      ),
    ],
  };
}

const instance = (sql: string, id: string, dbId: string): Instance => ({
  id,
  index: 0,
  dbId,
  question: 'q?',
  evidence: '',
  sql,
  difficulty: null,
});

function synthesized(instances: readonly Instance[], dbOf: (dbId: string) => DatabaseInfo) {
  return instances.flatMap((i) => {
    const outcome = synthesizeFromTemplate(i, dbOf(i.dbId), 'test');
    return outcome.ok ? [{ id: i.id, dbId: i.dbId, spec: outcome.value.spec }] : [];
  });
}

describe('parameters are described with the column their SQL compares them with (resolved independently)', () => {
  let shop: DatabaseInfo;
  beforeAll(() => {
    shop = shopDb();
  });
  afterAll(removeTempDirs);

  test('the independent resolver itself: scopes, correlation, reused aliases, derived tables', () => {
    const compared = (sql: string) => Object.fromEntries(comparedColumns(sql, shop)!);
    expect(
      compared('SELECT name FROM product WHERE category_id = (SELECT category_id FROM category WHERE name = :n)'),
    ).toEqual({
      n: 'category.name',
    });
    expect(
      compared('SELECT name FROM product AS p WHERE EXISTS (SELECT 1 FROM sale WHERE p.name = :a AND quantity > :q)'),
    ).toEqual({
      a: 'product.name',
      q: 'sale.quantity',
    });
    expect(
      compared(
        'SELECT T1.name FROM product AS T1 WHERE T1.category_id IN (SELECT T1.category_id FROM category AS T1 WHERE T1.name = :n)',
      ),
    ).toEqual({
      n: 'category.name',
    });
    expect(compared('SELECT T.name FROM (SELECT name FROM product WHERE price < :p) AS T WHERE T.name = :n')).toEqual({
      p: 'product.price',
      n: 'derived',
    });
  });

  test('our shop: every parameter compared with a schema column is described with that column', () => {
    const endpoints = synthesized(
      SHOP_QUESTIONS.map((sql, i) => instance(sql, `shop-${i}`, 'shop')),
      () => shop,
    );
    expect(endpoints).toHaveLength(SHOP_QUESTIONS.length);
    const t = tally(endpoints, () => shop);
    expect(t.wrong).toEqual([]);
    expect(t.unparsed).toBe(0);
    // Most parameters sit inside a subquery over another table: the test checks them, it does not skip them.
    expect(t.checked).toBeGreaterThanOrEqual(20);
  });

  (existsSync(BIRD_DIR) ? test : test.skip)(
    'BIRD dev: every parameter compared with a schema column is described with that column',
    async () => {
      const source = await loadSource(BIRD_DIR);
      const databases = new Map(source.databases.map((db) => [db.dbId, db]));
      const endpoints = synthesized(source.instances, (dbId) => databases.get(dbId)!);
      const byId = new Map(endpoints.map((e) => [e.id, databases.get(e.dbId)!]));
      const t = tally(endpoints, (id) => byId.get(id)!);
      expect(t.wrong).toEqual([]);
      // The rest compare a function of a column (STRFTIME, SUBSTR) or a derived table's column, or do not parse here.
      expect(t.checked).toBeGreaterThan(0.85 * t.parameters);
    },
  );
});
