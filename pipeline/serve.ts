import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { createRestServer, type RestDatabase, type RestServer } from '../runtime/rest/server.js';
import { createLanedExecutor, type LanedExecutor } from '../runtime/sql/lanes.js';
import { endpointsFile, type ServedEndpoints } from './emit-rest.js';
import { FORMAT_VERSION } from './manifest.js';
import { SourceError } from './generate.js';
import { packageVersion } from '../core/package-root.js';
import { SetupError } from './setup-error.js';
import { loadSource } from './sources/index.js';

/**
 * `nl2api serve`: the REST endpoints a run generated (`<out>/rest/endpoints/<db>.json`),
 * served live over the source's databases. A database whose content changed since the run
 * verified its endpoints is refused: the published answers would no longer hold.
 */

export interface ServeOptions {
  config: Config;
  host: string;
  port: number;
}

export interface ServingHandle {
  server: RestServer;
  databases: { dbId: string; endpoints: number }[];
  /** SQL workers killed and replaced so far (a CPU budget or a timeout), and budget overruns left to finish (lanes.ts). */
  sqlStats(): { workerRecycles: number; sparedOverruns: number };
  close(): Promise<void>;
}

export async function serveDataset(options: ServeOptions): Promise<ServingHandle> {
  const { config } = options;
  if (!config.source) throw new SourceError('no source given (--source <dir>): the databases to serve');
  const outDir = path.resolve(config.out);
  const source = await loadSource(config.source, { dbIds: config.dbIds }).catch((error: Error) => {
    throw new SourceError(error.message);
  });
  const databases: RestDatabase[] = [];
  for (const db of source.databases) {
    const file = path.join(outDir, ...endpointsFile(db.dbId).split('/'));
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) {
      if (config.dbIds)
        throw new SourceError(
          `no REST endpoints for ${db.dbId} in ${outDir} (run generate with the rest formulation first)`,
        );
      continue;
    }
    const served = JSON.parse(text) as ServedEndpoints;
    if (served.formatVersion !== FORMAT_VERSION)
      throw new SourceError(
        `${db.dbId}: the endpoints in ${outDir} are of dataset format ${served.formatVersion ?? 1}, this nl2api serves format ${FORMAT_VERSION}; run generate again`,
      );
    if (served.fingerprint !== db.fingerprint) {
      throw new SourceError(
        `${db.dbId}: the database changed since its endpoints were generated and verified; run generate again`,
      );
    }
    databases.push({ db, endpoints: served.endpoints });
  }
  if (databases.length === 0)
    throw new SourceError(`no REST endpoints in ${outDir} for the databases of ${config.source}`);
  const pool = servingExecutor(
    config,
    databases.map(({ db }) => db.path),
  );
  try {
    const server = await createRestServer({
      databases,
      executor: pool,
      timeoutMs: config.rest.serveTimeoutMs,
      maxInFlight: config.rest.serveMaxInFlight,
      host: options.host,
      port: options.port,
      title: `${config.datasetName ?? source.datasetName} REST API`,
      version: packageVersion(),
      maxStringLength: config.rest.maxStringLength,
    });
    return {
      server,
      databases: databases.map(({ db, endpoints }) => ({ dbId: db.dbId, endpoints: endpoints.length })),
      sqlStats: () => ({ workerRecycles: pool.workerRecycles(), sparedOverruns: pool.sparedOverruns() }),
      close: async () => {
        await server.close();
        await pool.close();
      },
    };
  } catch (error) {
    await pool.close();
    throw listenError(error as NodeJS.ErrnoException, options) ?? error;
  }
}

/**
 * The SQL executor `nl2api serve` runs queries on: cheap ones never wait behind expensive
 * ones; each lane's spare worker takes a killed one's place at once, its `databases` already open.
 */
export function servingExecutor(config: Config, databases: readonly string[] = []): LanedExecutor {
  const lanes = config.rest.serveLanes;
  return createLanedExecutor({
    fast: { workers: config.sqlWorkers, maxInFlight: lanes.fastMaxInFlight },
    slow: { workers: lanes.slowWorkers, maxInFlight: lanes.slowMaxInFlight },
    fastBudgetMs: lanes.fastBudgetMs,
    promoteAfter: lanes.promoteAfter,
    recyclesPerMinute: lanes.recyclesPerMinute,
    warm: databases,
  });
}

/** Why the server could not listen, in a line, when the cause is the machine's (a port in use, a foreign address). */
function listenError(error: NodeJS.ErrnoException, { host, port }: ServeOptions): SetupError | undefined {
  const why: Record<string, string> = {
    EADDRINUSE: 'the port is in use (choose another with --port, or --port 0 for any free one)',
    EACCES: 'permission denied (ports below 1024 need privileges)',
    EADDRNOTAVAIL: 'no such address on this machine (--host)',
  };
  return error.code && why[error.code]
    ? new SetupError(`cannot listen on ${host}:${port}: ${why[error.code]} [${error.code}]`)
    : undefined;
}
