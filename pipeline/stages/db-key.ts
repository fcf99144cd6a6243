import { hashJson } from '../../core/hash.js';
import type { DatabaseInfo } from '../../core/model.js';

const keys = new WeakMap<DatabaseInfo, { fingerprint: string; schema: string }>();

/**
 * The database part of a cache key: the file's content hash and a hash of the schema as
 * ingested (names, types, keys and the column descriptions that end up in tool specs).
 */
export function dbCacheKey(db: DatabaseInfo): { fingerprint: string; schema: string } {
  let key = keys.get(db);
  if (!key) {
    key = { fingerprint: db.fingerprint, schema: hashJson(db.tables) };
    keys.set(db, key);
  }
  return key;
}
