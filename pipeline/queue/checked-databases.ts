import { stat } from 'node:fs/promises';
import { UnrecoverableError } from 'bullmq';
import { getOrStart, LruMap } from '../../core/lru.js';
import type { DatabaseInfo } from '../../core/model.js';
import { sha256File } from '../sources/schema.js';

/**
 * A worker runs a job only on the database the run was planned on: a job names a path, and
 * the file at that path on this machine must hash to the run's fingerprint, or the job fails
 * for good (its results would not be the run's). A file is hashed once per path, size, mtime
 * and fingerprint; the checks of the files used last are kept.
 */

/** Checks kept: far more than the databases of a few runs, bounded for a worker that lives long. */
const KEPT_CHECKS = 1024;

export class CheckedDatabases {
  private readonly checks = new LruMap<string, Promise<void>>(KEPT_CHECKS);

  /** The database as the run saw it: same content, or the job fails for good. */
  async check(db: DatabaseInfo): Promise<DatabaseInfo> {
    const info = await stat(db.path).catch(() => null);
    if (!info) throw new UnrecoverableError(`database ${db.dbId} is not at ${db.path} on this worker`);
    const key = `${db.path}|${info.size}|${info.mtimeMs}|${db.fingerprint}`;
    await getOrStart(this.checks, key, async () => {
      if ((await sha256File(db.path)) !== db.fingerprint)
        throw new UnrecoverableError(`database ${db.dbId} at ${db.path} differs from the one the run was planned on`);
    });
    return db;
  }
}
