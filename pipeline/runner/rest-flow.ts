import type { RestServer } from '../../runtime/rest/server.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import type { RestCall } from '../../runtime/rest/spec.js';
import type { Config } from '../../config/schema.js';
import { groupBy } from '../../core/group.js';
import { lazy } from '../../core/lazy.js';
import type { DatabaseInfo, GoldResult, Instance } from '../../core/model.js';
import type { Outcome } from '../../core/outcome.js';
import { packageVersion } from '../../core/package-root.js';
import type { RestServices } from '../rest-service-types.js';
import type { RestStageContext } from '../stage.js';
import { goldStage } from '../stages/gold.js';
import { restCallStage, type RestCallContext, type RestCallInput, type RestCallRecord } from '../stages/rest-call.js';
import { dedupStage, indistinctReason, servedEndpoint, type DatabaseDedup } from '../stages/rest-dedup.js';
import { synthesizeStage, type Synthesis, type SynthesisItem } from '../stages/rest-synthesize.js';
import type { StageRunner } from './stage-runner.js';

/**
 * REST's units of work over its stages (gold → rest.synthesize ⇒ rest.dedup → execute/verify),
 * each run through a StageRunner, so every outcome is cached and keyed the same way whoever
 * runs it. Two schedulers use them: the in-process REST runner (rest.ts), which goes stage
 * by stage over the whole run, and the queue's job processors (queue/stage-processors.ts),
 * one job per synthesis batch, per database's dedup, per instance's call.
 *
 * The stage modules load with this one; a run whose outputs are reused only plans keys, and
 * the stages load their checks, synthesizers and server lazily.
 */

export interface RestFlowContext {
  config: Config;
  datasetName: string;
  executor: SqlExecutor;
  services: RestServices;
}

/** An instance through rest.synthesize: its gold and what synthesis made of it. */
export interface SynthesizedItem extends SynthesisItem {
  synthesis: Synthesis;
}

/** A database's dedup with its calls by instance (built once). */
export interface ServedDedup {
  dedup: DatabaseDedup;
  /** Its cache key: a verify job finds it by this. */
  key: string;
  calls: ReadonlyMap<string, RestCall>;
}

const restServer = lazy(() => import('../../runtime/rest/server.js'));

export class RestFlow {
  constructor(
    readonly runner: StageRunner,
    private readonly base: RestFlowContext,
  ) {}

  contextOf(db: DatabaseInfo): RestStageContext {
    const { config, datasetName, executor, services } = this.base;
    return { config, datasetName, executor, services, db };
  }

  /** The key of an instance's rest.synthesize outcome, planned from the instance alone (nothing runs). */
  synthesisKey(instance: Instance, db: DatabaseInfo): string {
    const ctx = this.contextOf(db);
    const gold = this.runner.standIn(this.runner.keyOf(goldStage, { instance }, ctx)) as GoldResult;
    return this.runner.keyOf(synthesizeStage, { instance, gold }, ctx);
  }

  gold(instance: Instance, db: DatabaseInfo): Promise<Outcome<GoldResult>> {
    return this.runner.run(goldStage, { instance }, this.contextOf(db));
  }

  /** One synthesis batch (instances of `db` whose gold is accepted). */
  synthesize(
    items: readonly SynthesisItem[],
    db: DatabaseInfo,
    onSettled?: (count: number) => void,
  ): Promise<Outcome<Synthesis>[]> {
    return this.runner.runBatch(synthesizeStage, items, this.contextOf(db), onSettled);
  }

  /**
   * What the store holds of these instances' synthesis, by their planned keys (nothing runs,
   * not even gold). Each synthesis counts by its key in the keys after it.
   */
  async storedSynthesis(instances: readonly Instance[], db: DatabaseInfo): Promise<Map<Instance, Outcome<Synthesis>>> {
    const outcomes = await this.runner.lookupKeys<Synthesis>(
      synthesizeStage.name,
      instances.map((instance) => this.synthesisKey(instance, db)),
    );
    const found = new Map<Instance, Outcome<Synthesis>>();
    instances.forEach((instance, i) => {
      const outcome = outcomes[i];
      if (outcome) found.set(instance, outcome);
    });
    return found;
  }

  /** A database's rest.dedup over its synthesized instances, in instance order. */
  async dedup(db: DatabaseInfo, synthesized: ReadonlyMap<Instance, Synthesis>): Promise<Outcome<ServedDedup>> {
    const ctx = this.contextOf(db);
    const input = {
      synthesized: [...synthesized].map(([instance, synthesis]) => ({ instanceId: instance.id, synthesis })),
    };
    const outcome = await this.runner.run(dedupStage, input, ctx);
    if (!outcome.ok) return outcome;
    return { ok: true, value: served(outcome.value, this.runner.keyOf(dedupStage, input, ctx)) };
  }

  /** A dedup computed before, by its key (a verify job's). */
  async storedDedup(key: string): Promise<ServedDedup | undefined> {
    const [outcome] = await this.runner.lookupKeys<DatabaseDedup>(dedupStage.name, [key]);
    return outcome?.ok ? served(outcome.value, key) : undefined;
  }

  /** An instance's call of its served endpoint, over HTTP to `serverUrl` (asked only if the call is made), verified. */
  call(
    item: SynthesizedItem,
    dedup: ServedDedup,
    db: DatabaseInfo,
    serverUrl: () => Promise<string>,
  ): Promise<Outcome<RestCallRecord>> {
    return this.runner.run(restCallStage, this.callInput(item, dedup), this.callContext(db, serverUrl));
  }

  /** The items among these whose call the store does not hold yet. */
  async uncalled(items: readonly SynthesizedItem[], dedup: ServedDedup, db: DatabaseInfo): Promise<SynthesizedItem[]> {
    const ctx = this.callContext(db, noServer);
    const keys = items.map((item) => this.runner.keyOf(restCallStage, this.callInput(item, dedup), ctx));
    const stored = await this.runner.lookupKeys(restCallStage.name, keys);
    return items.filter((_, i) => !stored[i]);
  }

  /** The live server of these databases' deduped endpoints, on an ephemeral loopback port. */
  async startServer(dedups: readonly [DatabaseInfo, ServedDedup][]): Promise<RestServer> {
    const { createRestServer } = await restServer();
    const { config, datasetName, executor } = this.base;
    return createRestServer({
      databases: dedups.map(([db, { dedup }]) => ({ db, endpoints: dedup.canonical })),
      executor,
      timeoutMs: config.executeTimeoutMs,
      title: `${datasetName} REST API`,
      version: packageVersion(),
      maxStringLength: config.rest.maxStringLength,
      docs: false,
    });
  }

  private callContext(db: DatabaseInfo, serverUrl: () => Promise<string>): RestCallContext {
    return { ...this.contextOf(db), serverUrl };
  }

  /** What an instance's call stage is given: the item and its endpoint as served after dedup. */
  callInput(item: SynthesizedItem, { dedup, calls }: ServedDedup): RestCallInput {
    const endpoint = servedEndpoint(dedup, calls, item.instance.id);
    return { ...item, endpoint, indistinct: indistinctReason(dedup, endpoint.call.name) };
  }
}

/** Where planning calls (their keys never read the server) finds none. */
const noServer = (): Promise<string> => Promise.reject(new Error('no REST server: only call keys are planned here'));

function served(dedup: DatabaseDedup, key: string): ServedDedup {
  return { dedup, key, calls: new Map(dedup.calls) };
}

/**
 * The synthesis batches of these instances: per database (first-seen order), the instances
 * `missing` an outcome, in instance order, `batchSize` at a time. Batches do not depend on
 * gold outcomes (a queue driver forms them before any gold runs): a batch's gold rejections
 * are simply left out of its prompt.
 */
export function synthesisBatches(
  instances: readonly Instance[],
  missing: (instance: Instance) => boolean,
  batchSize: number,
): Instance[][] {
  const batches: Instance[][] = [];
  for (const list of groupBy(instances.filter(missing), (instance) => instance.dbId).values()) {
    for (let i = 0; i < list.length; i += batchSize) batches.push(list.slice(i, i + batchSize));
  }
  return batches;
}
