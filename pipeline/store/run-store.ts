import { makeDirectory } from '../../core/directories.js';

import { stat } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { canonicalJson, sha256 } from '../../core/hash.js';
import type { Outcome } from '../../core/outcome.js';
import type { OutcomeStore } from './outcome-store.js';

/**
 * The run store: terminal stage outcomes (accepted and rejected) keyed by a content hash
 * of (stage name, stage version, code fingerprint, the stage's cache-key parts), in a
 * SQLite file in WAL mode. Writes are buffered and committed in group transactions at
 * most every `commitIntervalMs` (`commit()` after each finished item; `flush()` at the end),
 * so a run killed at any point loses at most the items of that last interval, and a rerun
 * recomputes exactly those. Keys are content hashes, so a
 * rerun that recomputes an item rewrites the same row: nothing is ever duplicated.
 * Reads can be batched (`prefetch`, `getMany`): one statement for many keys.
 *
 * It also remembers database fingerprints by (path, size, mtime), so that an unchanged
 * database file is not hashed again on every run.
 */

export interface RunStoreOptions {
  /** Directory of the store file (created if needed). */
  dir: string;
  /** false: `get` always misses (everything recomputes) but results are still written. */
  read?: boolean;
  /** Group commits at most this often (one transaction per finished item costs more than the SQL of a run). */
  commitIntervalMs?: number;
}

/**
 * The cache key of a stage invocation. `refOf` names values that earlier stages produced
 * by their own cache key: such a value is hashed as `{ $ref: key }` instead of its content
 * (a Merkle chain: the upstream key determines the value), which keeps hashing cheap when
 * large values (gold rows, sequences) flow down the graph. `code` is the code fingerprint
 * (code-fingerprint.ts): a changed build changes every key.
 */
export function cacheKeyOf(
  stage: string,
  version: number,
  parts: unknown,
  refOf?: (value: object) => string | undefined,
  code = '',
): string {
  const asRef =
    refOf &&
    ((value: object) => {
      const ref = refOf(value);
      return ref === undefined ? undefined : `{"$ref":${JSON.stringify(ref)}}`;
    });
  return sha256(canonicalJson([stage, version, code, parts], asRef));
}

/**
 * The file's layout (PRAGMA user_version). 1: `results` is a rowid table, its values stored in
 * the order they come and the random content-hash keys in their own index. Before, it was a
 * WITHOUT ROWID table: each value went into the key's B-tree at a random place, and a cold BIRD
 * dev run's commits, replayed, cost twice the CPU (0.41 s against 0.19 s) in page splits and
 * rewrites, on the main process's critical path; reading them all back cost twice too.
 */
const LAYOUT = 1;

/**
 * Creates the tables, or upgrades a store of an older layout, which gives up its results:
 * their keys hold the code fingerprint of the build that wrote them, so no later build reads
 * them anyway; the file fingerprints stay. One immediate transaction: a second run opening
 * the store at the same moment waits, then finds it done.
 */
function createTables(db: Database.Database): void {
  db.transaction(() => {
    if ((db.pragma('user_version', { simple: true }) as number) < LAYOUT) db.exec('DROP TABLE IF EXISTS results');
    db.exec(`CREATE TABLE IF NOT EXISTS results (
      key TEXT PRIMARY KEY,
      stage TEXT NOT NULL,
      value TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS fingerprints (
      path TEXT PRIMARY KEY,
      size INTEGER NOT NULL,
      mtime_ms REAL NOT NULL,
      hash TEXT NOT NULL
    ) WITHOUT ROWID`);
    db.pragma(`user_version = ${LAYOUT}`);
  }).immediate();
}

/** SQLite's default limit of bound parameters is 32766; stay well below. */
const BATCH = 500;
const FEW = 32;
/** Keys read ahead and kept at most: a few databases' worth (a BIRD database's items have a few thousand stage keys). */
const MAX_PREFETCHED = 65_536;

export class RunStore implements OutcomeStore {
  private readonly db: Database.Database;
  private readonly read: boolean;
  private readonly pending = new Map<string, { stage: string; value: string }>();
  /** Rows read ahead by `prefetch` (null: known to be absent), dropped once read. */
  private readonly prefetched = new Map<string, string | null>();
  private readonly selectStatement: Database.Statement<[string], { value: string }>;
  private readonly insertStatement: Database.Statement<[string, string, string]>;
  private readonly batchStatement: Database.Statement<string[], { key: string; value: string }>;
  private closed = false;
  private readonly commitIntervalMs: number;
  private lastCommit = 0;

  constructor(options: RunStoreOptions) {
    makeDirectory(options.dir);
    this.db = new Database(path.join(options.dir, 'run-store.sqlite'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // Another run may hold the write lock for a moment.
    this.db.pragma('busy_timeout = 10000');
    createTables(this.db);
    this.selectStatement = this.db.prepare('SELECT value FROM results WHERE key = ?');
    this.insertStatement = this.db.prepare('INSERT OR REPLACE INTO results (key, stage, value) VALUES (?, ?, ?)');
    this.batchStatement = this.db.prepare(
      `SELECT key, value FROM results WHERE key IN (${Array.from({ length: BATCH }, () => '?').join(',')})`,
    );
    this.read = options.read ?? true;
    this.commitIntervalMs = options.commitIntervalMs ?? 200;
  }

  async get<T>(key: string): Promise<Outcome<T> | undefined> {
    const text = this.text(key);
    return text === undefined ? undefined : (JSON.parse(text) as Outcome<T>);
  }

  /** Many records at once (any JSON the caller stored), by key; absent keys are left out. */
  async getMany<T>(keys: readonly string[]): Promise<Map<string, T>> {
    this.prefetchNow(keys);
    const found = new Map<string, T>();
    for (const key of keys) {
      const text = this.text(key);
      if (text !== undefined) found.set(key, JSON.parse(text) as T);
    }
    return found;
  }

  /** Reads these keys ahead in a few statements; the next `get` of each is served from memory. */
  async prefetch(keys: readonly string[]): Promise<void> {
    this.prefetchNow(keys);
  }

  private prefetchNow(keys: readonly string[]): void {
    if (!this.read) return;
    const wanted = [...new Set(keys)].filter((key) => !this.pending.has(key) && !this.prefetched.has(key));
    // The batch statement always binds BATCH parameters: a few keys are cheaper one by one.
    if (wanted.length <= FEW) {
      for (const key of wanted) this.prefetched.set(key, this.selectStatement.get(key)?.value ?? null);
    } else this.prefetchBatches(wanted);
    this.forgetOldestPrefetched();
  }

  private prefetchBatches(wanted: readonly string[]): void {
    for (let i = 0; i < wanted.length; i += BATCH) {
      const chunk = wanted.slice(i, i + BATCH);
      for (const key of chunk) this.prefetched.set(key, null);
      const params = chunk.concat(Array.from({ length: BATCH - chunk.length }, () => ''));
      for (const row of this.batchStatement.all(...params)) this.prefetched.set(row.key, row.value);
    }
  }

  /**
   * Keys read ahead and never asked (the stages after an item's rejection) would stay for the
   * run: the oldest go past a bound (asking for one again only reads it from the file).
   */
  private forgetOldestPrefetched(): void {
    for (const key of this.prefetched.keys()) {
      if (this.prefetched.size <= MAX_PREFETCHED) return;
      this.prefetched.delete(key);
    }
  }

  /** Buffers a terminal outcome or record (as JSON text); durable after the next `flush()`. */
  put(key: string, stage: string, json: string): void {
    this.pending.set(key, { stage, value: json });
    this.prefetched.delete(key);
  }

  /** Writes the buffered outcomes if the last write is `commitIntervalMs` old. */
  async commit(): Promise<void> {
    if (Date.now() - this.lastCommit >= this.commitIntervalMs) this.flushNow();
  }

  /** Writes the buffered outcomes now, in one transaction. */
  async flush(): Promise<void> {
    this.flushNow();
  }

  private flushNow(): void {
    if (this.pending.size === 0 || this.closed) return;
    this.lastCommit = Date.now();
    const entries = [...this.pending];
    this.pending.clear();
    this.db.transaction(() => {
      for (const [key, { stage, value }] of entries) this.insertStatement.run(key, stage, value);
    })();
  }

  /**
   * The content hash of a file, computed by `hash` only when the file's size or mtime differ
   * from what was recorded (or reads are off).
   */
  async fingerprint(file: string, hash: (file: string) => Promise<string>): Promise<string> {
    const info = await stat(file);
    if (this.read) {
      const row = this.db.prepare('SELECT size, mtime_ms, hash FROM fingerprints WHERE path = ?').get(file) as
        { size: number; mtime_ms: number; hash: string } | undefined;
      if (row && row.size === info.size && row.mtime_ms === info.mtimeMs) return row.hash;
    }
    const digest = await hash(file);
    this.db
      .prepare('INSERT OR REPLACE INTO fingerprints (path, size, mtime_ms, hash) VALUES (?, ?, ?, ?)')
      .run(file, info.size, info.mtimeMs, digest);
    return digest;
  }

  /** Number of stored outcomes per stage (diagnostics and tests). */
  counts(): Record<string, number> {
    const rows = this.db.prepare('SELECT stage, COUNT(*) AS n FROM results GROUP BY stage ORDER BY stage').all() as {
      stage: string;
      n: number;
    }[];
    return Object.fromEntries(rows.map((r) => [r.stage, r.n]));
  }

  close(): void {
    if (this.closed) return;
    this.flushNow();
    this.closed = true;
    this.db.close();
  }

  private text(key: string): string | undefined {
    if (!this.read) return undefined;
    const pending = this.pending.get(key);
    if (pending) return pending.value;
    const prefetched = this.prefetched.get(key);
    if (prefetched !== undefined) {
      this.prefetched.delete(key);
      return prefetched ?? undefined;
    }
    return this.selectStatement.get(key)?.value;
  }
}
