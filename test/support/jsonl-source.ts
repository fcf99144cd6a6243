import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

/**
 * A generic JSONL source in `folder` (created): one SQLite database `<dbId>.sqlite` built by
 * `schemaSql` (tables and rows), and `questions.jsonl` with a question per `[id, sql]`.
 */
export function writeJsonlSource(
  folder: string,
  dbId: string,
  schemaSql: string,
  questions: readonly (readonly [id: string, sql: string])[],
): string {
  mkdirSync(folder, { recursive: true });
  const db = new Database(path.join(folder, `${dbId}.sqlite`));
  db.exec(schemaSql);
  db.close();
  const lines = questions.map(([id, sql]) => JSON.stringify({ id, db_id: dbId, question: `question ${id}`, sql }));
  writeFileSync(path.join(folder, 'questions.jsonl'), lines.join('\n'));
  return folder;
}
