import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { buildConstructsSource } from '../../bench/constructs-source.js';

/** Issue 34's question set: laid out as a source, every question runs on its own database. */

const dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-constructs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('64 questions over two databases, each SQL running on its database, ids unique', () => {
  buildConstructsSource(dir);
  const questions = readFileSync(path.join(dir, 'questions.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; db_id: string; sql: string });
  expect(questions.length).toBeGreaterThanOrEqual(60);
  expect(new Set(questions.map((q) => q.id)).size).toBe(questions.length);
  expect([...new Set(questions.map((q) => q.db_id))].sort()).toEqual(['league', 'shop']);
  const empty: string[] = [];
  for (const q of questions) {
    const db = new Database(path.join(dir, `${q.db_id}.sqlite`), { readonly: true });
    try {
      if (db.prepare(q.sql).raw().all().length === 0) empty.push(q.id);
    } finally {
      db.close();
    }
  }
  // The one empty answer is meant: NOT IN over a column holding NULL answers nothing.
  expect(empty).toEqual(['shop-not-in-null-1']);
});
