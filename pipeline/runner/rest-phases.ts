import type { Config } from '../../config/schema.js';
import type { EndpointSpec, RestCall, SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import type { Verification } from '../../verifiers/checks.js';
import { dbCacheKey } from '../stages/db-key.js';
import { goldStage } from '../stages/gold.js';
import { dedupDatabase, type DatabaseDedup } from '../stages/rest-dedup.js';
import { callOverHttp } from '../stages/rest-execute.js';
import { synthesizeWithRetries, type SynthesisItem, type SynthesisRecord } from '../stages/rest-synthesize.js';
import { directResponse, verifyRest, type RestVerifyContext } from '../stages/rest-verify.js';
import type { OutcomeStore } from '../store/outcome-store.js';
import { cacheKeyOf } from '../store/run-store.js';
import type { RestServices } from '../rest-service-types.js';
import { groupBy } from '../../core/group.js';
import { retryPolicyOf, withRetries } from './retry.js';
import { INTERNAL_ERROR, type StageRunner } from './stage-runner.js';

/**
 * REST's units of work, shared by the in-process REST runner (rest.ts) and the BullMQ
 * workers (queue/worker.ts), so that both compute exactly the same records under exactly
 * the same keys:
 *
 * - a synthesis batch: up to `rest.batchSize` instances of one database, whose records are
 *   not cached, in instance order (one LLM prompt; its retries stay within the batch);
 * - the dedup of one database over the records of all its synthesized instances;
 * - the final check of one instance: its call over HTTP against the served endpoints, verified.
 */

export interface RestPhaseContext {
  config: Config;
  datasetName: string;
  executor: SqlExecutor;
  store: OutcomeStore | null;
  /** Runs gold (cached with the SLOT/SEL flow's). */
  stageRunner: StageRunner;
  services: RestServices;
  code: string;
}

export type FinalRecord =
  | { ok: true; response: unknown; verification: Verification }
  | { ok: false; stage: 'execute' | 'verify'; category: string; message: string };

const DEDUP_VERSION = 1;
const VERIFY_VERSION = 1;

/**
 * The synthesis batches of these instances: per database (first-seen order), the instances
 * `missing` a record, in instance order, `batchSize` at a time. Batches do not depend on
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

/** gold for each instance, through the stage cache. */
export function goldOf(instance: Instance, db: DatabaseInfo, ctx: RestPhaseContext) {
  return ctx.stageRunner.run(goldStage, { instance }, { config: ctx.config, db, executor: ctx.executor });
}

/** One batch through the verify-and-retry loop; records are stored by their planned keys (internal errors are not). */
export async function synthesizeBatch(
  items: readonly SynthesisItem[],
  keys: readonly string[],
  db: DatabaseInfo,
  ctx: RestPhaseContext,
  onSettled?: (count: number) => void,
): Promise<SynthesisRecord[]> {
  if (items.length === 0) return [];
  const { config } = ctx;
  const records = await synthesizeWithRetries(items, {
    db,
    datasetName: ctx.datasetName,
    synthesizer: ctx.services.synthesizer,
    fallback: ctx.services.fallback,
    attempts: config.rest.attempts,
    check: async (endpoint, item) => {
      // A lost SQL worker is retried here; what still fails ends the item, uncached (rest-synthesize.ts).
      const respond = () =>
        withRetries(() => directResponse(endpoint, db, ctx.executor, config.executeTimeoutMs), retryPolicyOf(config));
      const { outcome } = await verifyRest(endpoint, respond, item, verifyContext(db, ctx));
      return outcome.ok ? null : { ok: false, category: outcome.category, message: outcome.message };
    },
    onSettled,
  });
  records.forEach((record, i) => {
    if (record.ok || record.category !== INTERNAL_ERROR)
      ctx.store?.put(keys[i], 'rest.synthesize', JSON.stringify(record));
  });
  return records;
}

/** What a database's dedup is computed from: its synthesized instances, in instance order. */
export interface DedupEntry {
  instanceId: string;
  synthesisKey: string;
  endpoint: SynthesizedEndpoint;
}

export function dedupKeyOf(
  db: DatabaseInfo,
  entries: readonly DedupEntry[],
  ctx: Pick<RestPhaseContext, 'services' | 'code'>,
): string {
  const parts = {
    db: dbCacheKey(db),
    entries: entries.map((e) => [e.instanceId, e.synthesisKey]),
    agent: ctx.services.dedupFingerprint,
  };
  return cacheKeyOf('rest.dedup', DEDUP_VERSION, parts, undefined, ctx.code);
}

/** A database's dedup, from the store when it was computed before (by this run, a worker, or an earlier run). */
export async function dedupFor(
  db: DatabaseInfo,
  entries: readonly DedupEntry[],
  ctx: RestPhaseContext,
): Promise<{ key: string; dedup: DatabaseDedup; cached: boolean }> {
  const key = dedupKeyOf(db, entries, ctx);
  const stored = ctx.store && (await storedDedup(key, ctx.store));
  if (stored) return { key, dedup: stored, cached: true };
  const dedup = await dedupDatabase(
    entries.map((e) => ({ instanceId: e.instanceId, endpoint: e.endpoint })),
    db,
    ctx.services.dedupAgent,
  );
  ctx.store?.put(key, 'rest.dedup', JSON.stringify({ ...dedup, calls: [...dedup.calls] } satisfies StoredDedup));
  return { key, dedup, cached: false };
}

type StoredDedup = Omit<DatabaseDedup, 'calls'> & { calls: [string, RestCall][] };

export async function storedDedup(key: string, store: OutcomeStore): Promise<DatabaseDedup | undefined> {
  const stored = (await store.getMany<StoredDedup>([key])).get(key);
  return stored && { ...stored, calls: new Map(stored.calls) };
}

/** The served endpoint and call of an instance after dedup. */
export function servedEndpoint(dedup: DatabaseDedup, instanceId: string): SynthesizedEndpoint {
  const call = dedup.calls.get(instanceId)!;
  const spec: EndpointSpec = dedup.canonical.find((s) => s.operationId === call.name)!;
  return { spec, call };
}

export function finalKeyOf(
  endpoint: SynthesizedEndpoint,
  synthesisKey: string,
  db: DatabaseInfo,
  ctx: Pick<RestPhaseContext, 'config' | 'services' | 'code'>,
): string {
  const { config } = ctx;
  return cacheKeyOf(
    'rest.verify',
    VERIFY_VERSION,
    {
      endpoint,
      synthesis: synthesisKey,
      db: dbCacheKey(db),
      judge: ctx.services.judge?.fingerprint ?? null,
      maxStringLength: config.rest.maxStringLength,
      timeoutMs: config.executeTimeoutMs,
    },
    undefined,
    ctx.code,
  );
}

export type Timed = <T>(stage: string, work: () => Promise<T>) => Promise<T>;

/**
 * The call over HTTP, then its checks, stored under `key`; a call that got no response at
 * all, or only 503s (the server's SQL worker lost), is an internal error (not stored).
 */
export async function finalCheck(
  item: SynthesisItem,
  endpoint: SynthesizedEndpoint,
  key: string,
  serverUrl: () => Promise<string>,
  db: DatabaseInfo,
  ctx: RestPhaseContext,
  timed: Timed,
): Promise<FinalRecord> {
  const { config } = ctx;
  const respond = async () => {
    const url = await serverUrl();
    return timed('rest.execute', () =>
      withRetries(() => callOverHttp(url, endpoint.call, config.executeTimeoutMs), retryPolicyOf(config)),
    );
  };
  let record: FinalRecord;
  try {
    const { outcome, response } = await timed('rest.verify', () =>
      verifyRest(endpoint, respond, item, verifyContext(db, ctx)),
    );
    record = outcome.ok
      ? { ok: true, response: response!.body, verification: outcome.value }
      : { ok: false, stage: 'verify', category: outcome.category, message: outcome.message };
  } catch (error) {
    return {
      ok: false,
      stage: 'execute',
      category: INTERNAL_ERROR,
      message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
  ctx.store?.put(key, 'rest.verify', JSON.stringify(record));
  return record;
}

function verifyContext(db: DatabaseInfo, ctx: RestPhaseContext): RestVerifyContext {
  return { db, maxStringLength: ctx.config.rest.maxStringLength, judge: ctx.services.judge };
}
