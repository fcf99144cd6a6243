import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Temporary folders and SQLite files for tests (removed by `removeTempDirs`). */

const created: string[] = [];

export function tempDir(prefix = 'nl2api-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Writes a SQLite file built by `statements` (parent folders created). */
export function createDb(file: string, statements: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.exec(statements);
  db.close();
  return file;
}

/** A small database: heroes with powers, a BLOB column and a foreign key. */
export const HEROES_SQL = `
  CREATE TABLE publisher (id INTEGER PRIMARY KEY, publisher_name TEXT);
  CREATE TABLE hero (
    id INTEGER PRIMARY KEY,
    hero_name TEXT,
    publisher_id INTEGER REFERENCES publisher(id),
    height_cm REAL,
    avatar BLOB
  );
  INSERT INTO publisher VALUES (1, 'Marvel'), (2, 'DC');
  INSERT INTO hero VALUES
    (1, 'Spider-Man', 1, 178, x'01ff'),
    (2, 'Batman', 2, 188, NULL),
    (3, 'Superman', 2, 191, NULL),
    (4, 'Storm', 1, 180.5, NULL);
`;

/** Counts forever (well, to 10^12): only a kill stops it. */
export const RUNAWAY_SQL =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000000) SELECT count(*) FROM c';

/** Polls `condition`; the time limit only catches a hang (a loaded machine may take its time). */
export async function waitUntil(condition: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A process's process group: field 5 of /proc/<pid>/stat (Linux; after the command, which may hold spaces), else ps. */
export function processGroupOf(pid: number): number {
  if (!existsSync('/proc/self/stat'))
    return Number(execFileSync('ps', ['-o', 'pgid=', '-p', String(pid)], { encoding: 'utf8' }).trim());
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

/** BIRD dev, where the tests find it (the skip notice reads the same gate). */
export { BIRD_DIR } from '../support/gates.js';
