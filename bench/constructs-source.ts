import Database from 'better-sqlite3';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeDirectory } from '../core/directories.js';

/**
 * Issue 34's question set, written before the code that is to support it: 64 questions over
 * two databases of our own (bench/constructs: shop.sql, league.sql, questions.jsonl) covering
 * correlated subqueries, window functions, derived tables, compound queries, CTEs, CASE and
 * expressions in GROUP BY, HAVING with subqueries, and bare columns under GROUP BY that the
 * data (not the schema) determines — with rows chosen so that another reading gives another
 * answer (NULLs under NOT IN, ties under RANK and ROW_NUMBER, a gap in a series). This lays
 * it out as a source in the generic layout (`<dir>/questions.jsonl`, `<dir>/<db>.sqlite`).
 */

// From the sources (bench/) or the build (dist/bench/): the set stays in the sources' bench/constructs.
const BENCH = path.dirname(fileURLToPath(import.meta.url));
const HERE =
  path.basename(path.dirname(BENCH)) === 'dist'
    ? path.join(BENCH, '..', '..', 'bench', 'constructs')
    : path.join(BENCH, 'constructs');

export function buildConstructsSource(dir: string): string {
  makeDirectory(dir);
  for (const file of readdirSync(HERE).filter((f) => f.endsWith('.sql'))) {
    const db = new Database(path.join(dir, file.replace(/\.sql$/, '.sqlite')));
    try {
      db.exec(readFileSync(path.join(HERE, file), 'utf8'));
    } finally {
      db.close();
    }
  }
  copyFileSync(path.join(HERE, 'questions.jsonl'), path.join(dir, 'questions.jsonl'));
  return dir;
}

/** `node dist/bench/constructs-source.js <dir>`: the source, ready for `nl2api generate --source <dir>`. */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = path.resolve(process.argv[2] ?? 'output/constructs-source');
  process.stdout.write(`${buildConstructsSource(dir)}\n`);
}
