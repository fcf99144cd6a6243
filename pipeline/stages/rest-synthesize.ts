import type { SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import type { FailedAttempt, Synthesizer } from '../../generators/rest/synthesis.js';
import type { DatabaseInfo, GoldResult, Instance, Verdict } from '../../core/model.js';
import type { Config } from '../../config/schema.js';
import { lazy } from '../../core/lazy.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { retryPolicyOf, withRetries } from '../runner/retry.js';
import { faultMessage, INTERNAL_ERROR } from '../runner/stage-runner.js';
import type { BatchStage, RestStageContext } from '../stage.js';
import { pinClock } from '../../generators/sql/clock.js';
import { clockKey } from './clock-key.js';
import { dbCacheKey } from './db-key.js';

// The checks and the endpoint runtime load only when something is synthesized (not on a warm run).
const restChecks = lazy(() => import('./rest-verify.js'));

/**
 * rest.synthesize with the verify-and-retry loop, for the instances of one database: the
 * synthesizer proposes endpoints, each is checked (format → execution → semantic, exactly
 * the checks the served endpoint will face), and the instances whose endpoint failed are
 * sent back with every failure so far as feedback, up to `attempts` times; then once to the
 * fallback (the template synthesizer, when the LLM keeps failing); then they are rejected
 * with the last failure's category.
 */

/** What rest.synthesize makes of an instance: its endpoint, who wrote it, and the candidates that failed before. */
export interface Synthesis {
  endpoint: SynthesizedEndpoint;
  synthesizer: string;
  attempts: FailedAttempt[];
}

/**
 * rest.synthesize as a batch stage: the instances of a batch (one database) in one prompt,
 * through the verify-and-retry loop. An item's key is its question, SQL and gold, the
 * database, and everything that decides the endpoint it ends with: the synthesizer, the
 * fallback and the judge, the attempts, the limits of the checks.
 */
export const synthesizeStage: BatchStage<SynthesisItem, Synthesis, RestStageContext> = {
  kind: 'batch',
  name: 'rest.synthesize',
  version: 5,
  cacheKey: ({ instance, gold }, { config, db, datasetName, services }) => ({
    question: instance.question,
    evidence: instance.evidence,
    sql: instance.sql,
    gold,
    db: dbCacheKey(db),
    dataset: datasetName,
    synthesizer: services.synthesizer.fingerprint,
    fallback: services.fallback?.fingerprint ?? null,
    judge: services.judge?.fingerprint ?? null,
    attempts: config.rest.attempts,
    maxStringLength: config.rest.maxStringLength,
    timeoutMs: config.executeTimeoutMs,
    trial: { factor: config.rest.trialTimeoutFactor, minMs: config.rest.trialMinMs },
    ...clockKey(instance.sql, config),
  }),
  async runBatch(items, ctx, onSettled) {
    const { config, db, executor, services } = ctx;
    const { trialRun, verifyRest, restVerifyContext, checkRestFormat, checkScope } = await restChecks();
    const verifyContext = restVerifyContext(ctx);
    // The synthesizer sees the SQL with its clock pinned, as gold ran it (clock.ts).
    const pinned = items.map((item) => ({
      ...item,
      instance: { ...item.instance, sql: pinClock(item.instance.sql, config.referenceTime) },
    }));
    const records = await synthesizeWithRetries(pinned, {
      db,
      datasetName: ctx.datasetName,
      synthesizer: services.synthesizer,
      fallback: services.fallback,
      attempts: config.rest.attempts,
      check: async (proposed, item) => {
        const format = checkRestFormat(proposed, db, config.rest.maxStringLength);
        if (!format.ok) return { endpoint: proposed, failure: format };
        const scope = checkScope(proposed.spec, item.instance.sql, db);
        if (!scope.ok) return { endpoint: proposed, failure: scope };
        // A lost SQL worker is retried here; what still fails ends the item, uncached (below).
        const budget = trialTimeoutMs(item.gold, config);
        const trial = await withRetries(
          () => trialRun(proposed, item.gold, db, executor, budget),
          retryPolicyOf(config),
        );
        const { outcome } = await verifyRest(trial.endpoint, async () => trial.response, item, verifyContext);
        const failure = outcome.ok ? null : { ok: false, category: outcome.category, message: outcome.message };
        return { endpoint: trial.endpoint, failure };
      },
      onSettled,
    });
    return records.map((record) =>
      record.ok
        ? accept({ endpoint: record.endpoint, synthesizer: record.synthesizer, attempts: record.attempts })
        : reject(record.category, record.message),
    );
  },
};

/**
 * How long a proposal's trial run may take: `trialTimeoutFactor` times its gold's time, at
 * least `trialMinMs`, at most `executeTimeoutMs` (a gold that was not timed gets the most).
 */
export function trialTimeoutMs(gold: Pick<GoldResult, 'elapsedMs'>, config: Config): number {
  const { trialTimeoutFactor, trialMinMs } = config.rest;
  if (gold.elapsedMs === undefined) return config.executeTimeoutMs;
  return Math.min(config.executeTimeoutMs, Math.max(trialMinMs, Math.ceil(gold.elapsedMs * trialTimeoutFactor)));
}

/** The verdict of a trial run stopped at its budget (verifiers/rest.ts: a 504 response). */
const TRIAL_TIMEOUT = 'execution:timeout';

export type SynthesisRecord =
  | { ok: true; endpoint: SynthesizedEndpoint; synthesizer: string; attempts: FailedAttempt[] }
  | { ok: false; category: string; message: string; attempts: FailedAttempt[] };

export interface SynthesisItem {
  instance: Instance;
  gold: GoldResult;
}

export interface SynthesisLoopContext {
  db: DatabaseInfo;
  datasetName: string;
  synthesizer: Synthesizer;
  fallback: Synthesizer | null;
  attempts: number;
  /**
   * The checks of a candidate: its first failure, or null when it passes them all; and the
   * endpoint as it would be served (its response shaped by the trial run).
   */
  check(
    endpoint: SynthesizedEndpoint,
    item: SynthesisItem,
  ): Promise<{ endpoint: SynthesizedEndpoint; failure: Verdict | null }>;
  /** Called as items end (for progress). */
  onSettled?(count: number): void;
}

export async function synthesizeWithRetries(
  items: readonly SynthesisItem[],
  ctx: SynthesisLoopContext,
): Promise<SynthesisRecord[]> {
  const records: (SynthesisRecord | undefined)[] = items.map(() => undefined);
  const history: FailedAttempt[][] = items.map(() => []);

  // A throw is a fault of the run (a bug, a lost SQL worker), no verdict on an endpoint: it
  // ends the item at once as an internal error (never cached). Fed back as a failed attempt,
  // it would become part of what a later attempt makes of the item, and that is cached.
  const end = (i: number, error: unknown) => void (records[i] = internalError(error, history[i]));

  const tryEndpoint = async (
    synthesizer: Synthesizer,
    i: number,
    outcome: Outcome<SynthesizedEndpoint>,
  ): Promise<void> => {
    if (!outcome.ok) return void history[i].push({ category: outcome.category, message: outcome.message });
    let checked: { endpoint: SynthesizedEndpoint; failure: Verdict | null };
    try {
      checked = await ctx.check(outcome.value, items[i]);
    } catch (error) {
      return end(i, error);
    }
    const failure = checked.failure;
    if (!failure)
      records[i] = { ok: true, endpoint: checked.endpoint, synthesizer: synthesizer.name, attempts: [...history[i]] };
    else
      history[i].push({
        category: failure.category,
        message: failure.message,
        endpoint: { spec: outcome.value.spec, arguments: outcome.value.call.arguments },
      });
  };

  const round = async (synthesizer: Synthesizer, indices: number[]): Promise<number[]> => {
    const requests = indices.map((i) => ({ instance: items[i].instance, previous: history[i] }));
    try {
      const outcomes = await synthesizer.synthesize(requests, ctx.db, ctx.datasetName);
      await Promise.all(indices.map((i, k) => tryEndpoint(synthesizer, i, outcomes[k])));
    } catch (error) {
      indices.forEach((i) => end(i, error));
    }
    const remaining = indices.filter((i) => !records[i]);
    ctx.onSettled?.(indices.length - remaining.length);
    return remaining;
  };

  let pending = items.map((_, i) => i);
  const tries = ctx.synthesizer.ignoresFeedback ? 1 : ctx.attempts;
  // A proposal stopped at its trial budget sends its instance to the fallback at once: another
  // attempt would cost another budget and a killed SQL worker, and a model that proposed a query
  // many times its gold's cost (or one that never ends) is no better placed to fix it than the
  // template, whose endpoint has the gold's shape.
  const timedOut: number[] = [];
  for (let attempt = 0; attempt < tries && pending.length; attempt++) {
    const remaining = await round(ctx.synthesizer, pending);
    timedOut.push(...remaining.filter((i) => history[i].at(-1)?.category === TRIAL_TIMEOUT));
    pending = remaining.filter((i) => history[i].at(-1)?.category !== TRIAL_TIMEOUT);
  }
  pending = [...pending, ...timedOut].sort((a, b) => a - b);
  if (ctx.fallback && ctx.fallback !== ctx.synthesizer && pending.length) pending = await round(ctx.fallback, pending);
  for (const i of pending) {
    const last = history[i][history[i].length - 1];
    records[i] = {
      ok: false,
      category: last.category,
      message: `rejected after ${history[i].length} attempt(s); last: ${last.message}`,
      attempts: history[i],
    };
  }
  ctx.onSettled?.(pending.length);
  return records as SynthesisRecord[];
}

/** A throw where an outcome was expected is a fault of the run (a bug, a crashed worker): never cached, retried next run. */
function internalError(error: unknown, attempts: FailedAttempt[]): SynthesisRecord {
  return {
    ok: false,
    category: INTERNAL_ERROR,
    message: faultMessage(error),
    attempts,
  };
}
