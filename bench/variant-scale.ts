import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { copyFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { VerificationConfigSchema } from '../config/schema.js';
import { packageRoot } from '../core/package-root.js';
import { createDirectExecutor } from '../runtime/sql/direct.js';

/**
 * `node dist/bench/variant-scale.js [<bird dir>] [<db id>] [<size MB>]`: differential
 * verification on a database past a gigabyte. The database's largest table (an integer
 * primary key, no other unique column) is inflated by doubling its rows under fresh keys
 * (kept in the temp folder for reuse), then, for the dev questions that touch that table:
 * the gold SQL on the database, the time to build its value-perturbed copy once, and the
 * gold SQL on the perturbed and the reordered variants. The copy is built once per table and
 * reused by every question; the ratio to one pass over the table says what it costs.
 */

const root = packageRoot();
const birdDir = path.resolve(root, process.argv[2] ?? process.env.NL2API_BIRD_DIR ?? '../shared/bird-dev');
const dbId = process.argv[3] ?? 'european_football_2';
const targetMb = Number(process.argv[4] ?? 1100);

function inflated(): { file: string; table: string } {
  const source = path.join(birdDir, 'dev_databases', dbId, `${dbId}.sqlite`);
  const dir = path.join(os.tmpdir(), 'nl2api-variant-scale');
  const file = path.join(dir, `${dbId}-${targetMb}mb.sqlite`);
  const probe = new Database(source, { readonly: true });
  const table = largestTable(probe);
  probe.close();
  if (existsSync(file)) return { file, table };
  mkdirSync(dir, { recursive: true });
  const building = `${file}.tmp`;
  copyFileSync(source, building);
  const db = new Database(building);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  // The copies reference what the originals reference (better-sqlite3 enforces by default).
  db.pragma('foreign_keys = OFF');
  const info = db.prepare(`SELECT name, pk FROM pragma_table_info(?)`).all(table) as { name: string; pk: number }[];
  const key = info.find((c) => c.pk === 1)!.name;
  const others = info.filter((c) => c.pk === 0).map((c) => `"${c.name}"`);
  while (statSync(building).size < targetMb * 1024 * 1024) {
    const max = db.prepare(`SELECT max("${key}") FROM "${table}"`).pluck().get() as number;
    db.prepare(
      `INSERT INTO "${table}" ("${key}", ${others.join(', ')}) SELECT "${key}" + ?, ${others.join(', ')} FROM "${table}"`,
    ).run(max);
    process.stderr.write(`  ${table}: ${statSync(building).size >> 20} MB\n`);
  }
  db.close();
  renameSync(building, file);
  return { file, table };
}

/** The table with the most rows among those keyed by one integer column and nothing else unique. */
function largestTable(db: Database.Database): string {
  const tables = db
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  const candidates = tables.filter((t) => {
    const pk = db.prepare('SELECT type FROM pragma_table_info(?) WHERE pk > 0').pluck().all(t) as string[];
    const unique = db
      .prepare('SELECT count(*) FROM pragma_index_list(?) WHERE "unique" = 1 AND origin != \'pk\'')
      .pluck()
      .get(t) as number;
    return pk.length === 1 && pk[0].toUpperCase() === 'INTEGER' && unique === 0;
  });
  const rows = (t: string) => db.prepare(`SELECT count(*) FROM "${t}"`).pluck().get() as number;
  return candidates.sort((a, b) => rows(b) - rows(a))[0];
}

async function main(): Promise<void> {
  process.stderr.write(`inflating ${dbId} past ${targetMb} MB...\n`);
  const { file, table } = inflated();
  const questions = (
    JSON.parse(readFileSync(path.join(birdDir, 'dev.json'), 'utf8')) as { db_id: string; SQL: string }[]
  )
    .filter((q) => q.db_id === dbId && new RegExp(`\\b${table}\\b`, 'i').test(q.SQL))
    .slice(0, 8);
  const executor = createDirectExecutor();
  const time = async (run: () => Promise<unknown>) => {
    const start = performance.now();
    await run();
    return performance.now() - start;
  };
  const overlay = path.join(os.tmpdir(), 'nl2api-variant-scale', `${dbId}-${table}-perturbed.sqlite`);
  rmSync(overlay, { force: true });
  try {
    const rows = (
      await executor.run({ dbPath: file, sql: `SELECT count(*) FROM "${table}"`, params: [], timeoutMs: 0 })
    ).rows[0][0];
    // One pass reading every value of the table, streamed (materializing gigabytes of rows
    // would measure the garbage collector, not SQLite).
    const scanMs = await time(async () => {
      const db = new Database(file, { readonly: true });
      try {
        for (const _row of db.prepare(`SELECT * FROM "${table}"`).raw(true).iterate()) void _row;
      } finally {
        db.close();
      }
    });
    // As a run builds it: sampled past the configured size.
    const maxRows = VerificationConfigSchema.parse({}).variantRows;
    const buildMs = await time(() =>
      executor.buildVariantTable({
        dbPath: file,
        table,
        seed: 1,
        mode: 'columns',
        maxRows,
        file: overlay,
        timeoutMs: 0,
      }),
    );
    const lines = [
      `${dbId}: ${(statSync(file).size / 2 ** 20).toFixed(0)} MB, ${table} ${rows} rows; one full read of it ${(scanMs / 1000).toFixed(2)} s`,
      `  perturbed copy of ${table}, built once: ${(buildMs / 1000).toFixed(2)} s = ${(buildMs / scanMs).toFixed(1)}x one full read (${(statSync(overlay).size / 2 ** 20).toFixed(0)} MB)`,
    ];
    let base = 0;
    let perturbed = 0;
    let reordered = 0;
    for (const q of questions) {
      const request = { dbPath: file, sql: q.SQL, params: [], timeoutMs: 0 };
      base += await time(() => executor.run(request));
      perturbed += await time(() => executor.run({ ...request, view: { overlays: [overlay], reverseScans: false } }));
      reordered += await time(() => executor.run({ ...request, view: { overlays: [], reverseScans: true } }));
    }
    lines.push(
      `  ${questions.length} gold SQL touching it: ${(base / 1000).toFixed(2)} s on the database, ${(perturbed / 1000).toFixed(2)} s on the perturbed variant, ${(reordered / 1000).toFixed(2)} s on the reordered one`,
      `  differential verification of those questions' gold, build included: ${((base + perturbed + reordered + buildMs) / base).toFixed(2)}x the gold alone; without the one-off build ${((base + perturbed + reordered) / base).toFixed(2)}x`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await executor.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`variant-scale: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
