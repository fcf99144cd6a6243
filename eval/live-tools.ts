import type { Config } from '../config/schema.js';
import { Cleanups } from '../core/cleanups.js';
import { callsRest, type DatabaseInfo } from '../core/model.js';
import { packageVersion } from '../core/package-root.js';
import { loadSource } from '../pipeline/sources/index.js';
import { createRestServer } from '../runtime/rest/server.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import { createSqlPool } from '../runtime/sql/pool.js';
import { memoizeExecutor } from '../pipeline/sql-memo.js';
import { DatasetError, type EvalDataset } from './dataset.js';
import type { EnvironmentOptions } from './environment.js';

/**
 * A generated dataset's tools, live: the source's databases (each checked to be the one the
 * dataset was generated from), a pool of SQL workers, and for REST and chain the dataset's endpoints
 * served on loopback. Evaluation runs models against them; an export runs the gold calls
 * through them for their real outputs.
 *
 * The pool's results are shared (pipeline/sql-memo.ts): the databases are read-only, and a
 * database's items send the same statements again and again (the previews of the same first
 * calls, near-duplicate questions, every repeat and model of an item): on BIRD dev SLOT one
 * statement in eight had run before, an eighth of the SQL workers' time.
 */

export interface LiveTools {
  environment: EnvironmentOptions;
  databases: ReadonlyMap<string, DatabaseInfo>;
  /** Closes the server and the SQL workers, every part whatever the others do. */
  close(): Promise<void>;
}

/** `executor`: SQL workers of the caller's (left open); by default the live tools start their own, memoized. */
export async function openLiveTools(
  dataset: EvalDataset,
  source: string,
  config: Config,
  shared?: SqlExecutor,
): Promise<LiveTools> {
  const databases = await openDatabases(source, dataset);
  // Closed last-opened first.
  const opened: [string, () => unknown][] = [];
  const close = async () => {
    const cleanups = new Cleanups();
    for (const [part, cleanup] of opened.splice(0)) await cleanups.run(part, cleanup);
    cleanups.throwIfFailed('closing the live tools');
  };
  try {
    const executor = shared ?? memoizeExecutor(createSqlPool({ size: config.sqlWorkers, lookahead: 1 }));
    if (!shared) opened.unshift(['the SQL workers', () => executor.close()]);
    const environment: EnvironmentOptions = {
      executor,
      databases,
      pool: dataset.pool,
      timeoutMs: config.executeTimeoutMs,
    };
    if (callsRest(dataset.formulation)) {
      const server = await createRestServer({
        databases: [...dataset.databases].map(([db, { endpoints }]) => ({
          db: databases.get(db) as DatabaseInfo,
          endpoints: endpoints ?? [],
        })),
        executor,
        timeoutMs: config.executeTimeoutMs,
        title: `${dataset.datasetName} REST API`,
        version: packageVersion(),
        maxStringLength: config.rest.maxStringLength,
        docs: false,
      });
      opened.unshift(['the REST server', () => server.close()]);
      environment.restUrl = server.url;
      environment.restEndpoints = new Map(
        [...dataset.databases].map(([db, { endpoints }]) => [
          db,
          new Map((endpoints ?? []).map((e) => [e.operationId, { path: e.path, parameters: e.parameters }])),
        ]),
      );
    }
    return { environment, databases, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The source's databases, each as it was when the dataset was generated (else its answers no longer hold). */
async function openDatabases(source: string, dataset: EvalDataset): Promise<Map<string, DatabaseInfo>> {
  const loaded = await loadSource(source, { dbIds: [...dataset.databases.keys()] }).catch((error: Error) => {
    throw new DatasetError(error.message);
  });
  const databases = new Map(loaded.databases.map((db) => [db.dbId, db]));
  for (const [dbId, { fingerprint }] of dataset.databases) {
    const db = databases.get(dbId);
    if (!db) throw new DatasetError(`${source} has no database ${dbId}`);
    if (db.fingerprint !== fingerprint)
      throw new DatasetError(`${dbId}: the database changed since the dataset was generated; generate it again`);
  }
  return databases;
}
