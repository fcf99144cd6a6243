import Database from 'better-sqlite3';
import type { LlmCache } from './cache.js';

/**
 * LLM replies in their own SQLite file (WAL, so several processes may read while one
 * writes). A reply is written once per key; a rerun with unchanged prompts reads it back.
 */
export class SqliteLlmCache implements LlmCache {
  private readonly db: Database.Database;
  private readonly select: Database.Statement<[string], { value: string }>;
  private readonly insert: Database.Statement<[string, string, number]>;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // As the run store: a commit is not synced to disk each time (a reply is written on the
    // event loop, as it arrives); a killed process loses nothing, a power cut the last replies.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS llm_replies (key TEXT PRIMARY KEY, value TEXT NOT NULL, created_at INTEGER NOT NULL)',
    );
    this.select = this.db.prepare('SELECT value FROM llm_replies WHERE key = ?');
    this.insert = this.db.prepare('INSERT OR REPLACE INTO llm_replies (key, value, created_at) VALUES (?, ?, ?)');
  }

  async get(key: string): Promise<string | undefined> {
    return this.select.get(key)?.value;
  }

  async put(key: string, value: string): Promise<void> {
    this.insert.run(key, value, Date.now());
  }

  close(): void {
    this.db.close();
  }
}
