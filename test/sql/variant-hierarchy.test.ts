import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { buildVariantTable } from '../../runtime/sql/variant-table.js';

/**
 * A table whose column references its own key (employee.manager_id → employee.employee_id):
 * its perturbed variants keep the hierarchy a forest, whatever the seed and mode, while who
 * reports to whom changes (a recursive query over it ends, with another answer).
 */

let dir: string;
let source: string;

/** [employee_id, manager_id]: a tree three wide, a long chain under it, a second tree. */
const EMPLOYEES: [number, number | null][] = [
  [1, null],
  [2, 1],
  [3, 1],
  [4, 1],
  [5, 2],
  [6, 3],
  [7, 4],
  [8, 5],
  [9, 6],
  [10, 7],
  [11, 5],
  [12, 8],
  [13, 12],
  [14, 13],
  [15, null],
  [16, 15],
  [17, 16],
];

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-hierarchy-'));
  source = path.join(dir, 'staff.sqlite');
  const db = new Database(source);
  db.exec(`
    CREATE TABLE employee (employee_id INTEGER PRIMARY KEY, name TEXT, manager_id INTEGER REFERENCES employee(employee_id), salary INTEGER);
    CREATE TABLE part (a INTEGER, b INTEGER, parent_a INTEGER, parent_b INTEGER, label TEXT,
      PRIMARY KEY (a, b), FOREIGN KEY (parent_a, parent_b) REFERENCES part(a, b));
  `);
  const insert = db.prepare('INSERT INTO employee VALUES (?, ?, ?, ?)');
  for (const [id, manager] of EMPLOYEES) insert.run(id, `e${id}`, manager, 1000 + 100 * id);
  const part = db.prepare('INSERT INTO part VALUES (?, ?, ?, ?, ?)');
  for (let i = 1; i <= 8; i++) part.run(i, 0, i === 1 ? null : i - 1, i === 1 ? null : 0, `p${i}`);
  db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function build(table: string, seed: number, mode: 'columns' | 'rows', maxRows = 1000): string {
  const file = path.join(dir, `${table}-${seed}-${mode}-${maxRows}.sqlite`);
  expect(buildVariantTable({ dbPath: source, table, seed, mode, maxRows, file, timeoutMs: 60_000 })).toBe('built');
  return file;
}

function read<T>(file: string, sql: string): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).raw().all() as T[];
  } finally {
    db.close();
  }
}

/** Whether following parents from any row comes back to a row already on its chain. */
function hasCycle(parents: Map<number, number | null>): boolean {
  for (const start of parents.keys()) {
    const seen = new Set<number>();
    for (let at: number | null | undefined = start; at !== null && at !== undefined; at = parents.get(at)) {
      if (seen.has(at)) return true;
      seen.add(at);
    }
  }
  return false;
}

const managers = (file: string) =>
  new Map(read<[number, number | null]>(file, 'SELECT employee_id, manager_id FROM employee'));

const TEAM_OF_2 =
  'WITH RECURSIVE team(id) AS (SELECT employee_id FROM employee WHERE manager_id = 2 UNION ALL SELECT e.employee_id FROM employee AS e JOIN team ON e.manager_id = team.id) SELECT COUNT(*) FROM team';

test('the original is a forest that a free rotation of manager_id would close into cycles', () => {
  expect(hasCycle(new Map(EMPLOYEES))).toBe(false);
  // Rotated by one row, as any other column is: 1 → 1's successor's manager, ... a cycle.
  const rotated = new Map(EMPLOYEES.map(([id], i) => [id, EMPLOYEES[(i + 1) % EMPLOYEES.length][1]]));
  expect(hasCycle(rotated)).toBe(true);
});

test.each(['columns', 'rows'] as const)(
  'mode %s: every seed keeps the hierarchy acyclic and one level deep per link, and changes it',
  (mode) => {
    const original = new Map(EMPLOYEES);
    const answers = new Set<number>();
    for (let seed = 0; seed < 25; seed++) {
      const file = build('employee', seed, mode);
      const variant = managers(file);
      expect(hasCycle(variant)).toBe(false);
      // The column's values are its own, moved: the same multiset.
      expect([...variant.values()].sort()).toEqual([...original.values()].sort());
      // Level 2 (5, 6, 7) has three distinct managers: any rotation among them changes each.
      for (const id of [5, 6, 7]) expect(variant.get(id)).not.toBe(original.get(id));
      const [[count]] = read<[number]>(file, TEAM_OF_2);
      answers.add(count);
    }
    // The recursive query ends on every variant, and its answer moves (6 on the original).
    expect(read<[number]>(source, TEAM_OF_2)).toEqual([[6]]);
    expect([...answers].some((n) => n !== 6)).toBe(true);
  },
);

test('same seed, same bytes; a sampled table stays acyclic too; a composite self-reference stays in place', () => {
  const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
  const first = build('employee', 7, 'columns');
  const again = path.join(dir, 'again.sqlite');
  buildVariantTable({
    dbPath: source,
    table: 'employee',
    seed: 7,
    mode: 'columns',
    maxRows: 1000,
    file: again,
    timeoutMs: 60_000,
  });
  expect(sha(again)).toBe(sha(first));
  for (const mode of ['columns', 'rows'] as const) {
    for (let seed = 0; seed < 10; seed++) expect(hasCycle(managers(build('employee', seed, mode, 8)))).toBe(false);
  }
  // Names and salaries still move as before (mode columns: each by itself).
  const names = read<[number, string]>(first, 'SELECT employee_id, name FROM employee');
  expect(names.some(([id, name]) => name !== `e${id}`)).toBe(true);
  const parts = read<[number, number | null, string]>(
    build('part', 3, 'columns'),
    'SELECT a, parent_a, label FROM part',
  );
  expect(parts.map(([a, parent]) => [a, parent])).toEqual(
    Array.from({ length: 8 }, (_, i) => [i + 1, i === 0 ? null : i]),
  );
  expect(parts.some(([a, , label]) => label !== `p${a}`)).toBe(true);
});
