import { Queue, UnrecoverableError } from 'bullmq';
import { forgetEndpointChecks } from '../../generators/rest/format-check.js';
import { forgetVariantLookups } from '../variants.js';
import type { Redis } from 'ioredis';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { Cleanups } from '../../core/cleanups.js';
import { getOrStart, LruMap } from '../../core/lru.js';
import type { DatabaseInfo } from '../../core/model.js';
import type { RestServer } from '../../runtime/rest/server.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';
import { codeFingerprint } from '../code-fingerprint.js';
import type { RestServiceHandle } from '../rest-service-types.js';
import { restServices } from '../rest-services.js';
import { restLabel } from '../progress.js';
import { runChains } from '../runner/chain.js';
import { runRest } from '../runner/rest.js';
import { RestFlow, type ServedDedup } from '../runner/rest-flow.js';
import { retryPolicyOf } from '../runner/retry.js';
import { StageRunner } from '../runner/stage-runner.js';
import { memoizeExecutor, type MemoizedExecutor } from '../sql-memo.js';
import { RedisStore } from '../store/redis-store.js';
import { CheckedDatabases } from './checked-databases.js';
import { closeConnection, redisConnection, type ConnectionWatch } from './connection.js';
import { STAGE_QUEUES, storePrefix } from './jobs.js';
import { RunRegistry } from './registry.js';
import { KEPT_DATABASES, RunContexts, unreportedUsage, type RunContext, type RunDatabase } from './run-contexts.js';
import { sharedLlm } from './shared-llm.js';

/**
 * What a queue worker's jobs share, apart from the BullMQ workers that hand them out: the
 * Redis connection with the registry and the stores on it, the SQL pool, the runs' contexts
 * and REST services, the REST servers of deduped databases, the queue verify jobs go to.
 * What costs is opened on first use (the SQL worker processes, the verify queue's
 * connection); `close` closes every part, whatever the others do.
 */

export interface JobResourceOptions {
  url: string;
  prefix: string;
  watch: ConnectionWatch;
  /** SQL worker processes (killable, for timeouts). */
  sqlWorkers: number;
  /** Tests pass a scripted chat model. */
  chatModel?: BaseChatModel;
  log: (line: string) => void;
}

/** REST servers kept: one per deduped database, the latest few. */
const KEPT_SERVERS = 16;

export class JobResources {
  readonly redis: Redis;
  readonly registry: RunRegistry;
  readonly runs: RunContexts;
  private readonly databases = new CheckedDatabases();
  /** An evicted server is closed at once: a job in hand that still calls it fails and is retried. */
  private readonly servers = new LruMap<string, Promise<RestServer>>(
    KEPT_SERVERS,
    undefined,
    (evicted) => void this.closeEvicted(evicted),
  );
  /**
   * The database files whose SQL results the memo keeps: the last ones jobs named. generate
   * forgets a database's results once its outputs are written; a worker is never told it is
   * through with one (it serves jobs of many databases and runs, interleaved), so a database
   * that KEPT_DATABASES others were named after is taken as done and its results forgotten:
   * the memo follows the databases being worked on, as the run contexts' chunks do, not the
   * corpus. One named again runs its statements again: time, never another result. The
   * process's other per-database lookups (variant tables touched, REST format verdicts) go
   * with it, as in generate.
   */
  private readonly sqlDatabases = new LruMap<string, DatabaseInfo>(KEPT_DATABASES, undefined, (db) => {
    this.executor?.forget(db.path);
    forgetVariantLookups(db);
    forgetEndpointChecks(db);
  });
  private pool?: SqlPool;
  private executor?: MemoizedExecutor;
  private verify?: { queue: Queue; connection: Redis };

  constructor(private readonly options: JobResourceOptions) {
    this.redis = redisConnection(options.url, {}, options.watch);
    this.registry = new RunRegistry(this.redis, options.prefix);
    const shared = new RedisStore(this.redis, { prefix: options.prefix });
    this.runs = new RunContexts({
      registry: this.registry,
      code: codeFingerprint(),
      storeOf: (spec) =>
        spec.config.cache
          ? shared
          : new RedisStore(this.redis, { prefix: storePrefix(options.prefix, { runId: spec.runId, cache: false }) }),
    });
  }

  /**
   * The SQL executor; its worker processes start with the first job that runs SQL, and a spare
   * one stands by (as generate's with REST): a worker killed at a timeout is replaced at once.
   */
  sql(): MemoizedExecutor {
    return (this.executor ??= memoizeExecutor(
      (this.pool = createSqlPool({ size: this.options.sqlWorkers, spare: 1, lookahead: 1 })),
    ));
  }

  /**
   * A database a job names: its chunk of the run's spec, its file checked against the run's
   * fingerprint; now the latest whose SQL results are kept.
   */
  async database(ctx: RunContext, dbId: string): Promise<RunDatabase> {
    const db = await this.runs.database(ctx, dbId);
    await this.databases.check(db.info);
    this.sqlDatabases.set(db.info.path, db.info);
    return db;
  }

  /**
   * REST's units of work for a job of the run, over a stage runner of its own (its metrics
   * are the job's, labelled as in process).
   */
  async restFlow(ctx: RunContext): Promise<RestFlow> {
    const services = await this.servicesOf(ctx);
    if (!services) throw new UnrecoverableError('REST services unavailable');
    const { config, datasetName, code } = ctx.spec;
    const runner = new StageRunner(ctx.store, retryPolicyOf(config), undefined, code, true, restLabel);
    return new RestFlow(runner, {
      config,
      datasetName,
      executor: this.sql(),
      services: services.services,
    });
  }

  /**
   * A database's chains (chain.compose) from its REST results as the store holds them, the way
   * the driver assembles them (runner/rest.ts reading, runner/chain.ts computing): done by the
   * database's barrier job, so the driver finds the outcome stored. Its metrics are reported.
   */
  async composeChains(ctx: RunContext, dbId: string): Promise<void> {
    const services = await this.servicesOf(ctx);
    if (!services) throw new UnrecoverableError('REST services unavailable');
    const { config, datasetName, code } = ctx.spec;
    const { info: db, instances } = await this.database(ctx, dbId);
    const executor = this.sql();
    const reading = new StageRunner(ctx.store, retryPolicyOf(config), undefined, code, false, restLabel);
    const rest = await runRest({
      config,
      datasetName,
      executor,
      services: services.services,
      databases: [db],
      instances,
      stageRunner: reading,
    });
    const computing = new StageRunner(ctx.store, retryPolicyOf(config), undefined, code);
    await runChains({ databases: [db], instances }, rest, {
      config,
      executor,
      writer: services.services.chainWriter,
      datasetName,
      stageRunner: computing,
    });
    await computing.flush();
    await this.report(ctx, computing);
  }

  /** Adds a job's stage metrics and the LLM usage since the last report to the run's counters. */
  async report(ctx: RunContext, stageRunner: { metrics: StageRunner['metrics'] }): Promise<void> {
    await this.registry.addMetrics(ctx.spec.runId, stageRunner.metrics, await unreportedUsage(ctx));
  }

  /** One live server per deduped database (this worker's, on a loopback port). */
  serverFor(flow: RestFlow, db: DatabaseInfo, dedup: ServedDedup): Promise<RestServer> {
    return getOrStart(this.servers, dedup.key, () => flow.startServer([[db, dedup]]));
  }

  /** The queue a dedup job adds its verify jobs to, on a connection of its own, opened on first use. */
  verifyQueue(): Queue {
    if (!this.verify) {
      const connection = redisConnection(this.options.url, {}, this.options.watch);
      const queue = new Queue(STAGE_QUEUES['rest.verify'], { connection, prefix: this.options.prefix });
      this.options.watch.errorsOf(queue, 'rest.verify queue');
      this.verify = { queue, connection };
    }
    return this.verify.queue;
  }

  /**
   * Closes every part, each whatever the others do, failures kept in `cleanups`: first what
   * jobs call (verify queue, REST servers, LLM services), then the SQL pool they run on, the
   * Redis connections last. Parts that failed to open were their jobs' failures, not ours here.
   */
  async close(cleanups: Cleanups): Promise<void> {
    await cleanups.run('rest.verify queue', () => this.verify?.queue.close());
    await Promise.all(
      [...this.servers.values()].map((server) =>
        cleanups.run('REST server', async () => (await opened(server))?.close()),
      ),
    );
    for (const context of this.runs.kept()) {
      await cleanups.run('REST services', async () => {
        const services = (await opened(context))?.services;
        (services && (await opened(services)))?.close();
      });
    }
    await cleanups.run('SQL pool', () => this.pool?.close());
    await Promise.all(
      [this.verify?.connection, this.redis].map((connection) =>
        cleanups.run('Redis connection', () => connection && closeConnection(connection)),
      ),
    );
  }

  private servicesOf(ctx: RunContext): Promise<RestServiceHandle | null> {
    return (ctx.services ??= restServices(ctx.spec.config, this.sql(), {
      model: this.options.chatModel,
      shared: sharedLlm(this.redis, this.options.prefix, ctx.spec.config),
    }));
  }

  private async closeEvicted(server: Promise<RestServer>): Promise<void> {
    try {
      await (await opened(server))?.close();
    } catch (error) {
      this.options.log(`worker: closing an evicted REST server failed: ${(error as Error).message}`);
    }
  }
}

/** What a promise opened, or undefined if it failed to (that failure was reported where it was awaited). */
function opened<T>(promise: Promise<T>): Promise<T | undefined> {
  return promise.then(
    (value) => value,
    () => undefined,
  );
}
