import Database from 'better-sqlite3';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { dedupEndpoints } from '../../generators/rest/dedup.js';
import { checkEndpointSpec } from '../../generators/rest/format-check.js';
import { synthesizeFromTemplate } from '../../generators/rest/template.js';
import { describeResponse } from '../../generators/rest/response-fields.js';
import { ResponseSpecSchema, type SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { generate } from '../../pipeline/generate.js';
import { packageRoot } from '../../core/package-root.js';
import type { DatabaseInfo, Instance, Rejection } from '../../core/model.js';
import { INTERNAL_ERROR, StageRunner } from '../../pipeline/runner/stage-runner.js';
import { loadSource } from '../../pipeline/sources/index.js';
import type { StageContext } from '../../pipeline/stage.js';
import { expandStage } from '../../pipeline/stages/expand.js';
import { decomposeStage, parseStage } from '../../pipeline/stages/index.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { generateStatements, type ColumnKind, type FuzzSchema, type FuzzStatement } from './sql-grammar.js';

/**
 * Drives fuzzed statements through nl2api the two ways that together reach every stage:
 * the whole pipeline (`generate`, all three formulations, on a BIRD-layout folder holding
 * copies of the databases), where gold stops what SQLite refuses; and, bypassing gold, the
 * stages that read SQL text (parse → slot.decompose → sel.expand, REST's template synthesizer,
 * its format check and the dedup canonical form) on every statement. Outcomes are tallied
 * as `stage:category`; an `internal_error` anywhere is a bug.
 */

export type Tally = Map<string, number>;

function count(tally: Tally, key: string): void {
  tally.set(key, (tally.get(key) ?? 0) + 1);
}

/** The schema a fuzzer needs from a SQLite file: tables, column kinds, foreign keys, a few values per column. */
export function readFuzzSchema(file: string): FuzzSchema {
  const db = new Database(file, { readonly: true });
  try {
    const names = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
    const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;
    const tables = names.map((table) => {
      const infos = db.prepare(`PRAGMA table_info(${quoted(table)})`).all() as { name: string; type: string }[];
      const columns = infos.map(({ name, type }) => {
        const samples = db
          .prepare(
            `SELECT DISTINCT ${quoted(name)} FROM ${quoted(table)} WHERE ${quoted(name)} IS NOT NULL ORDER BY 1 LIMIT 6`,
          )
          .pluck()
          .all() as (string | number)[];
        return { name, kind: columnKind(type, samples), samples };
      });
      return { name: table, columns };
    });
    const links = names.flatMap((table) =>
      (
        db.prepare(`PRAGMA foreign_key_list(${quoted(table)})`).all() as {
          table: string;
          from: string;
          to: string | null;
        }[]
      )
        .filter((fk) => fk.to !== null)
        .map((fk) => ({ from: { table, column: fk.from }, to: { table: fk.table, column: fk.to! } })),
    );
    return { tables, links };
  } finally {
    db.close();
  }
}

function columnKind(declared: string, samples: (string | number)[]): ColumnKind {
  const type = declared.toUpperCase();
  if (type.includes('INT')) return 'integer';
  if (/REAL|FLOA|DOUB|NUM|DEC/.test(type)) return 'real';
  return samples.length > 0 && samples.every((s) => typeof s === 'string' && /^\d{4}-\d{2}-\d{2}/.test(s))
    ? 'date'
    : 'text';
}

export interface FuzzSource {
  /** The BIRD question file (`dev.json`). */
  questionFile: string;
  /** The statements by question id. */
  statements: Map<string, FuzzStatement>;
}

/** A BIRD-layout folder in `dir`: copies of `databases` (never the originals: nothing may touch them) and the statements as questions. */
export function writeFuzzSource(
  dir: string,
  databases: { dbId: string; folder: string }[],
  statements: { dbId: string; statement: FuzzStatement }[],
): FuzzSource {
  for (const { dbId, folder } of databases) cpSync(folder, path.join(dir, 'dev_databases', dbId), { recursive: true });
  const byId = new Map<string, FuzzStatement>();
  const records = statements.map(({ dbId, statement }, i) => {
    byId.set(String(i), statement);
    return {
      question_id: i,
      db_id: dbId,
      question: `Fuzzed question ${i} (${statement.kind})?`,
      evidence: '',
      SQL: statement.sql,
      difficulty: 'simple',
    };
  });
  mkdirSync(dir, { recursive: true });
  const questionFile = path.join(dir, 'dev.json');
  writeFileSync(questionFile, JSON.stringify(records));
  return { questionFile, statements: byId };
}

export function fuzzConfig(source: string, out: string): Config {
  // Short SQL timeouts: a random join may be slow, and a timeout is a categorized rejection like any other.
  return parseConfig({
    source,
    out,
    cache: false,
    progress: 'none',
    goldTimeoutMs: 5000,
    executeTimeoutMs: 5000,
    rest: { synthesizer: 'template' },
  });
}

/** The whole pipeline on the source: every rejection, tallied and listed. */
export async function runPipeline(source: FuzzSource, out: string): Promise<{ tally: Tally; rejections: Rejection[] }> {
  await generate({ config: fuzzConfig(source.questionFile, out) });
  const rejections = readFileSync(path.join(out, 'rejections.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Rejection);
  const tally: Tally = new Map();
  for (const r of rejections) count(tally, `${r.formulation} ${r.stage}:${r.category}`);
  return { tally, rejections };
}

export interface DirectFailure {
  id: string;
  stage: string;
  message: string;
}

/**
 * Every statement, valid for SQLite or not, through the SQL-reading stages without gold:
 * their outcomes tallied, and each internal error listed with its statement id.
 */
export async function runSqlStagesDirectly(
  source: FuzzSource,
  out: string,
): Promise<{ tally: Tally; internalErrors: DirectFailure[] }> {
  const loaded = await loadSource(source.questionFile);
  const config = fuzzConfig(source.questionFile, out);
  const runner = new StageRunner(null, { retries: 0, baseMs: 0, maxMs: 0 });
  const tally: Tally = new Map();
  const internalErrors: DirectFailure[] = [];
  const record = (
    id: string,
    stage: string,
    outcome: { ok: true } | { ok: false; category: string; message: string },
  ): boolean => {
    count(tally, `${stage}:${outcome.ok ? 'accepted' : outcome.category}`);
    if (!outcome.ok && outcome.category === INTERNAL_ERROR)
      internalErrors.push({ id, stage, message: outcome.message });
    return outcome.ok;
  };
  // slot.decompose counts the rows of a bare column's tables (keys the data proves).
  const executor = createDirectExecutor();
  for (const db of loaded.databases) {
    const ctx: StageContext = { config, db, executor };
    const endpoints: { instanceId: string; endpoint: SynthesizedEndpoint }[] = [];
    for (const instance of loaded.instances.filter((i) => i.dbId === db.dbId)) {
      await slotAndSel(instance, runner, ctx, record);
      const endpoint = templateEndpoint(instance, db, record);
      if (endpoint) endpoints.push({ instanceId: instance.id, endpoint });
    }
    // The canonical form of every endpoint (rest.dedup), the valid and the ones the format check refused alike.
    const dedup = attempt(() => dedupEndpoints(endpoints, db));
    record(db.dbId, 'rest.dedup', dedup.ok ? dedup : { ok: false, category: INTERNAL_ERROR, message: dedup.message });
  }
  await executor.close();
  return { tally, internalErrors };
}

type Recorder = (
  id: string,
  stage: string,
  outcome: { ok: true } | { ok: false; category: string; message: string },
) => boolean;

async function slotAndSel(instance: Instance, runner: StageRunner, ctx: StageContext, record: Recorder): Promise<void> {
  const query = await runner.run(parseStage, { sql: instance.sql }, ctx);
  if (!record(instance.id, 'parse', query) || !query.ok) return;
  const slot = await runner.run(decomposeStage, { query: query.value }, ctx);
  if (!record(instance.id, 'slot.decompose', slot) || !slot.ok) return;
  record(instance.id, 'sel.expand', await runner.run(expandStage, { sequence: slot.value }, ctx));
}

function templateEndpoint(instance: Instance, db: DatabaseInfo, record: Recorder): SynthesizedEndpoint | null {
  const synthesized = attempt(() => synthesizeFromTemplate(instance, db, 'fuzz'));
  const outcome = synthesized.ok
    ? synthesized.value
    : { ok: false as const, category: INTERNAL_ERROR, message: synthesized.message };
  if (!record(instance.id, 'rest.synthesize', outcome) || !outcome.ok) return null;
  const checked = attempt(() => checkEndpointSpec(outcome.value.spec, db));
  const verdict = checked.ok ? checked.value : { ok: false, category: INTERNAL_ERROR, message: checked.message };
  record(
    instance.id,
    'rest.format_check',
    verdict.ok ? { ok: true } : { ok: false, category: verdict.category, message: verdict.message },
  );
  // Response fields are made from any SQL a synthesizer proposes: never a throw, always a valid response.
  const shaped = attempt(() => ResponseSpecSchema.parse(describeResponse(outcome.value.spec, db, null)));
  record(
    instance.id,
    'rest.response_fields',
    shaped.ok ? { ok: true } : { ok: false, category: INTERNAL_ERROR, message: shaped.message },
  );
  return outcome.value;
}

/** A throw turned into a value: the fuzzer counts it as an internal error instead of stopping. */
function attempt<T>(work: () => T): { ok: true; value: T } | { ok: false; message: string } {
  try {
    return { ok: true, value: work() };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

// ---- the fuzz run's settings, shared by its test files ----------------------------------------

/**
 * NL2API_FUZZ_N statements (default 1000), seeded by NL2API_FUZZ_SEED; with NL2API_FUZZ_N set,
 * the tallies are printed. `npm run fuzz` runs 10,000. 250 were tried for `npm test`: the
 * suite then left ~40 statements of the generators uncovered that 1000 reach.
 */
export const FUZZ_N = Number(process.env.NL2API_FUZZ_N ?? 1000);
export const FUZZ_SEED = Number(process.env.NL2API_FUZZ_SEED ?? 9);
/** A limit on a hung run, not a speed requirement: generous for any machine. */
export const FUZZ_LIMIT_MS = Math.max(300_000, FUZZ_N * 300);

const DEMO = path.join(packageRoot(), 'seeds', 'demo', 'dev_databases');
export const FUZZ_DATABASES = ['bookstore', 'cycling_club'].map((dbId) => ({ dbId, folder: path.join(DEMO, dbId) }));

/** The run's statements, over the demo databases in turn (any prefix covers every database). */
export function fuzzStatements(n = FUZZ_N, seed = FUZZ_SEED): { dbId: string; statement: FuzzStatement }[] {
  const perDb = FUZZ_DATABASES.map(({ dbId, folder }, k) => {
    const schema = readFuzzSchema(path.join(folder, `${dbId}.sqlite`));
    return generateStatements(schema, seed + k, Math.ceil(n / FUZZ_DATABASES.length)).map((statement) => ({
      dbId,
      statement,
    }));
  });
  return Array.from({ length: n }, (_, i) => perDb[i % perDb.length][Math.floor(i / perDb.length)]);
}

export function printTally(title: string, tally: Tally): void {
  if (process.env.NL2API_FUZZ_N === undefined) return;
  const lines = [...tally.entries()]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([key, n]) => `  ${String(n).padStart(6)}  ${key}`);
  console.log(`${title}\n${lines.join('\n')}`);
}
