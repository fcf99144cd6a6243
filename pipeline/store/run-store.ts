import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { canonicalJson, sha256 } from '../hash.js';
import type { Outcome } from '../outcome.js';

/**
 * The run store: terminal stage outcomes (accepted and rejected) keyed by a content hash
 * of (stage name, stage version, the stage's cache-key parts), in a SQLite file in WAL
 * mode. Writes are buffered and committed per finished item (`commit()`), one small
 * transaction each, so a run killed at any point loses at most the items in flight, and a
 * rerun recomputes exactly those. Keys are content hashes, so a rerun that recomputes an
 * item rewrites the same row: nothing is ever duplicated.
 */

export interface RunStoreOptions {
  /** Directory of the store file (created if needed). */
  dir: string;
  /** false: `get` always misses (everything recomputes) but results are still written. */
  read?: boolean;
}

/**
 * The cache key of a stage invocation. `refOf` names values that earlier stages produced
 * by their own cache key: such a value is hashed as `{ $ref: key }` instead of its content
 * (a Merkle chain: the upstream key determines the value), which keeps hashing cheap when
 * large values (SEL tool universes, gold rows) flow down the graph.
 */
export function cacheKeyOf(
  stage: string,
  version: number,
  parts: unknown,
  refOf?: (value: object) => string | undefined,
): string {
  return sha256(canonicalJson([stage, version, parts], refOf));
}

export class RunStore {
  private readonly db: Database.Database;
  private readonly read: boolean;
  private readonly pending = new Map<string, { stage: string; value: string }>();
  private readonly selectStatement: Database.Statement<[string], { value: string }>;
  private readonly insertStatement: Database.Statement<[string, string, string]>;
  private closed = false;

  constructor(options: RunStoreOptions) {
    mkdirSync(options.dir, { recursive: true });
    this.db = new Database(path.join(options.dir, 'run-store.sqlite'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // Another run (or a BullMQ worker) may hold the write lock for a moment.
    this.db.pragma('busy_timeout = 10000');
    this.db.exec(`CREATE TABLE IF NOT EXISTS results (
      key TEXT PRIMARY KEY,
      stage TEXT NOT NULL,
      value TEXT NOT NULL
    ) WITHOUT ROWID`);
    this.selectStatement = this.db.prepare('SELECT value FROM results WHERE key = ?');
    this.insertStatement = this.db.prepare('INSERT OR REPLACE INTO results (key, stage, value) VALUES (?, ?, ?)');
    this.read = options.read ?? true;
  }

  get<T>(key: string): Outcome<T> | undefined {
    if (!this.read) return undefined;
    const pending = this.pending.get(key);
    if (pending) return JSON.parse(pending.value) as Outcome<T>;
    const row = this.selectStatement.get(key);
    return row ? (JSON.parse(row.value) as Outcome<T>) : undefined;
  }

  /** Buffers a terminal outcome (as JSON text); durable after the next `commit()`. */
  put(key: string, stage: string, outcomeJson: string): void {
    this.pending.set(key, { stage, value: outcomeJson });
  }

  /** Writes the buffered outcomes in one transaction. */
  commit(): void {
    if (this.pending.size === 0 || this.closed) return;
    const entries = [...this.pending];
    this.pending.clear();
    this.db.transaction(() => {
      for (const [key, { stage, value }] of entries) this.insertStatement.run(key, stage, value);
    })();
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
    this.commit();
    this.closed = true;
    this.db.close();
  }
}
