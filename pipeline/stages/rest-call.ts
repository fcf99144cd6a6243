import type { SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import type { GoldResult, Instance } from '../../core/model.js';
import { lazy } from '../../core/lazy.js';
import { accept, reject } from '../../core/outcome.js';
import type { Verification } from '../../verifiers/checks.js';
import type { ItemStage, RestStageContext } from '../stage.js';
import { dbCacheKey } from './db-key.js';
import { callOverHttp } from './rest-execute.js';
import type { Synthesis } from './rest-synthesize.js';

// The checks load with the first call that is not cached.
const restChecks = lazy(() => import('./rest-verify.js'));

/**
 * REST's execute and verify: the instance's call of its served endpoint, made over HTTP
 * against the live server only if a check needs the response, then the REST checks. One
 * stage, because the format check decides whether the call is made at all. A call that got
 * no response, or only 503s (the server's SQL worker lost), throws TransientError: the
 * runner retries it, then reports a fault of the run (not cached).
 */

export interface RestCallInput {
  instance: Instance;
  gold: GoldResult;
  /** The instance's rest.synthesize output (counts by its key, which holds the gold's). */
  synthesis: Synthesis;
  /** The endpoint and call as served after dedup. */
  endpoint: SynthesizedEndpoint;
  /** Why rest.dedup's gate refuses the endpoint (a caller could not tell it from another), or null. */
  indistinct: string | null;
}

export interface RestCallContext extends RestStageContext {
  /** The live server's base URL (started on first use). */
  serverUrl(): Promise<string>;
}

export interface RestCallRecord {
  /** The response body, as the sample's `output_after_executing_api`. */
  response: unknown;
  verification: Verification;
}

export const restCallStage: ItemStage<RestCallInput, RestCallRecord, RestCallContext> = {
  kind: 'item',
  name: 'verify',
  // 3: unordered responses in canonical row order (runtime/rest/endpoint.ts).
  version: 3,
  cacheKey: ({ endpoint, synthesis, indistinct }, { config, db, services }) => ({
    formulation: 'rest',
    endpoint,
    indistinct,
    synthesis,
    db: dbCacheKey(db),
    judge: services.judge?.fingerprint ?? null,
    maxStringLength: config.rest.maxStringLength,
    timeoutMs: config.executeTimeoutMs,
  }),
  async run({ instance, gold, endpoint, indistinct }, ctx) {
    if (indistinct !== null) return reject('format:indistinct', indistinct);
    const respond = async () => callOverHttp(await ctx.serverUrl(), endpoint.call, ctx.config.executeTimeoutMs);
    const { verifyRest, restVerifyContext } = await restChecks();
    const { outcome, response } = await verifyRest(endpoint, respond, { instance, gold }, restVerifyContext(ctx));
    return outcome.ok
      ? accept({ response: response!.body, verification: outcome.value })
      : reject(outcome.category, outcome.message);
  },
};
