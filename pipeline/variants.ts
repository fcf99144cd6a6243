import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDirOf } from '../config/load.js';
import type { Config, VerificationConfig } from '../config/schema.js';
import { hashJson } from '../core/hash.js';
import { getOrStart, LruMap } from '../core/lru.js';
import type { DatabaseInfo, GoldResult } from '../core/model.js';
import {
  isExecutorFault,
  type DatabaseView,
  type SqlExecutor,
  type SqlRequest,
  type VariantTableRequest,
  type VariantTableResult,
} from '../runtime/sql/executor.js';
import { significant, tokenize, unquote } from '../runtime/sql/lexer.js';
import { slug } from '../generators/rest/naming.js';

/**
 * The database variants of differential verification (verifiers/differential.ts), derived
 * from the source without ever writing to it and at the cost of what is used:
 * - `reordered`: the database itself, every unordered scan read backwards (SQLite's
 *   `reverse_unordered_selects`): the same rows in another physical order. Costs nothing. The
 *   gold runs there (an answer that changes depends on the row order); a sample need not:
 * - `perturbed-<i>`: each table a statement touches replaced by a copy whose non-key values
 *   are permuted (runtime/sql/variant-table.ts), seeded, and read backwards too, so that a
 *   sample is checked against other values and another row order in one run; a table of
 *   more than `verification.variantRows` rows is sampled down to about that many. A copy is built
 *   once per table, database content and seed, the first time a statement touches that table,
 *   and kept in the cache folder for later runs; untouched tables are read from the original.
 * A variant is used through `onVariant`: a database and an executor that run every
 * statement on it, so the gold SQL, compiled SLOT/SEL sequences and REST endpoints run there
 * unchanged.
 */

export interface Variant {
  name: string;
  reverseScans: boolean;
  /** The seed of its permutations; null: the original values. */
  seed: number | null;
  /** How its tables are perturbed (variant-table.ts): columns one by one, or rows whole. */
  mode: VariantTableRequest['mode'];
}

/**
 * `reordered`, then value-perturbed variants: odd ones rotate each column by itself (a row's
 * values part), even ones rotate whole rows onto other keys (a table's rows stay whole, the
 * joins between tables change).
 */
export function variantsOf(verification: VerificationConfig): Variant[] {
  return Array.from({ length: verification.variants }, (_, i) =>
    i === 0
      ? { name: 'reordered', reverseScans: true, seed: null, mode: 'columns' as const }
      : {
          name: `perturbed-${i}`,
          reverseScans: true,
          seed: verification.seed + i - 1,
          mode: i % 2 === 1 ? ('columns' as const) : ('rows' as const),
        },
  );
}

/** The variants a sample of `gold` must agree with it on: the value-perturbed ones the gold ran on. */
export function sampleVariants(config: Config, gold: GoldResult): Variant[] {
  const ran = new Set((gold.variants ?? []).map((v) => v.variant));
  return variantsOf(config.verification).filter((variant) => variant.seed !== null && ran.has(variant.name));
}

/** Building a variant table failed: a fault of the run (never a verdict about an item). */
export class VariantBuildError extends Error {
  override name = 'VariantBuildError';
}

/**
 * The builder's own code, hashed: variant tables built by other code are not reused (and
 * nobody has to remember to bump a version). The sibling module with this one's extension:
 * `.js` once built, `.ts` under jest.
 */
function builderVersion(): string {
  if (builderHash === undefined) {
    const here = fileURLToPath(import.meta.url);
    const builder = path.join(path.dirname(here), '..', 'runtime', 'sql', `variant-table${path.extname(here)}`);
    builderHash = hashJson(readFileSync(builder, 'utf8')).slice(0, 12);
  }
  return builderHash;
}
let builderHash: string | undefined;
/** SQLite attaches at most 10 databases to a connection (the original is one of them). */
const MAX_OVERLAYS = 10;

/**
 * `db` on `variant`: the same database for the runtime (what it compiles and probes — the
 * schema, indexes and planner statistics — is the variant's too, so its per-database caches
 * hold), and an executor that runs every statement there.
 */
export function onVariant(
  ctx: { config: Config; db: DatabaseInfo; executor: SqlExecutor },
  variant: Variant,
): { db: DatabaseInfo; executor: SqlExecutor } {
  const { config, db, executor } = ctx;
  const view = async (sql: string): Promise<DatabaseView> => {
    if (variant.seed === null) return { overlays: [], reverseScans: variant.reverseScans };
    const seed = variant.seed;
    const tables = touchedTables(sql, db).slice(0, MAX_OVERLAYS);
    const files = await Promise.all(
      tables.map((table) => variantTable(config, db, executor, table, seed, variant.mode)),
    );
    const touched = files.filter((file): file is string => file !== null);
    // Every table of the variant built so far, when they fit: a statement's answer does not
    // change, but the executor keeps far fewer distinct views open (each new one starts cold).
    const all = [
      ...new Set([...touched, ...(builtFiles.get(`${db.fingerprint}/${seed}/${variant.mode}`) ?? [])]),
    ].sort();
    const overlays = all.length <= MAX_OVERLAYS ? all : touched;
    return {
      overlays,
      reverseScans: variant.reverseScans,
      ...(overlays.length > touched.length ? { read: touched } : {}),
    };
  };
  return {
    db,
    executor: {
      run: async (request: SqlRequest) => executor.run({ ...request, view: await view(request.sql) }),
      buildVariantTable: (request) => executor.buildVariantTable(request),
      close: async () => {},
    },
  };
}

/**
 * The tables of `db` a statement names, sorted: every word or quoted name that is a table
 * name (a column of the same name only adds a table that is not needed).
 */
export function touchedTables(sql: string, db: DatabaseInfo): string[] {
  // The same statements come back on every variant, for SLOT and SEL alike: lex them once.
  return touched.getOrSet(`${db.fingerprint}\n${sql}`, () => {
    const tables = new Map(db.tables.map((t) => [t.name.toLowerCase(), t.name]));
    const named = new Set<string>();
    for (const token of significant(tokenize(sql))) {
      if (token.kind !== 'word' && token.kind !== 'dquote' && token.kind !== 'quoted') continue;
      const table = tables.get(unquote(token).toLowerCase());
      if (table) named.add(table);
    }
    return [...named].sort();
  });
}

const touched = new LruMap<string, string[]>(8192);

/** Builds in flight or done in this process, by file (a failure is not remembered). */
const builds = new LruMap<string, Promise<VariantTableResult>>(4096);
/** The files built, by database fingerprint and seed. */
const builtFiles = new Map<string, Set<string>>();

/** Lets go of what this process remembers of a database's variants: a run that is through with it. */
export function forgetVariantLookups(db: DatabaseInfo): void {
  touched.deleteWhere((key) => key.startsWith(`${db.fingerprint}\n`));
  builds.deleteWhere((file) => file.includes(`${path.sep}${folderOf(db)}${path.sep}`));
  for (const key of builtFiles.keys()) if (key.startsWith(`${db.fingerprint}/`)) builtFiles.delete(key);
}

/** A database's folder of variant tables: its content, not its id (a clone is another database). */
function folderOf(db: DatabaseInfo): string {
  return db.fingerprint.slice(0, 32);
}

/**
 * Where variant tables are kept (an absolute, normalized path), and a table's file name there:
 * both asked for every table of every statement on every variant, so computed once.
 */
function variantsRoot(config: Config): string {
  let root = roots.get(config);
  if (root === undefined) {
    root = path.resolve(config.verification.dir ?? path.join(cacheDirOf(config), 'variants'));
    roots.set(config, root);
  }
  return root;
}
const roots = new WeakMap<Config, string>();

function tableFileName(table: string): string {
  return tableFileNames.getOrSet(table, () => `${slug(table)}-${hashJson(table).slice(0, 8)}.sqlite`);
}
const tableFileNames = new LruMap<string, string>(4096);

/** The file of one perturbed table, built on first use; null for a table that cannot be copied (it is read as it is). */
async function variantTable(
  config: Config,
  db: DatabaseInfo,
  executor: SqlExecutor,
  table: string,
  seed: number,
  mode: Variant['mode'],
): Promise<string | null> {
  const file = [
    variantsRoot(config),
    builderVersion(),
    folderOf(db),
    `${mode}-${seed}-${config.verification.variantRows}`,
    tableFileName(table),
  ].join(path.sep);
  const result = await getOrStart(builds, file, async () => {
    if (existsSync(file)) return 'built';
    const { variantRows: maxRows, buildTimeoutMs: timeoutMs } = config.verification;
    const request = { dbPath: db.path, table, seed, mode, maxRows, file, timeoutMs };
    return executor.buildVariantTable(request).catch((error: unknown) => {
      if (isExecutorFault(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new VariantBuildError(`cannot build the variant (seed ${seed}) of ${db.dbId}.${table}: ${message}`);
    });
  });
  if (result !== 'built') return null;
  const key = `${db.fingerprint}/${seed}/${mode}`;
  builtFiles.set(key, (builtFiles.get(key) ?? new Set()).add(file));
  return file;
}
