import { isServed, type SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { responseBody } from '../../runtime/rest/response.js';
import { describeResponse } from '../../generators/rest/response-fields.js';
import { describeParameterValues } from '../../generators/rest/parameter-values.js';
import { runEndpoint } from '../../runtime/rest/endpoint.js';
import { toErrorResponse } from '../../runtime/rest/errors.js';
import { isExecutorFault, type SqlExecutor } from '../../runtime/sql/executor.js';
import type { AnswerJudge } from '../../verifiers/judge.js';
import { REST_CHECKS, runChecks, type RestSubject, type Verification } from '../../verifiers/checks.js';
import type { VariantRun } from '../../verifiers/differential.js';
import { restVariantRun, type RestResponse } from '../../verifiers/rest.js';
export { checkRestFormat } from '../../verifiers/rest.js';
export { checkScope } from '../../generators/rest/scope.js';
import type { RestStageContext, StageContext } from '../stage.js';
import { onVariant, sampleVariants } from '../variants.js';
import type { DatabaseInfo, GoldResult, Instance } from '../../core/model.js';
import { accept, reject, TransientError, type Outcome } from '../../core/outcome.js';

/**
 * REST verification: the REST checks (verifiers/checks.ts), the first failure rejecting
 * with its category (as for SLOT/SEL). A response the comparison rules cannot decide goes
 * to the judge when there is one; its verdict and rationale become the semantic verdict.
 */

export interface RestVerifyContext {
  db: DatabaseInfo;
  maxStringLength: number;
  judge: AnswerJudge | null;
  /** The endpoint called on each database variant the gold was run on. */
  onVariants(endpoint: SynthesizedEndpoint, gold: GoldResult): Promise<VariantRun[]>;
}

/** The checks of an endpoint call; `respond` makes the call, once, and only if a check needs it. */
export async function verifyRest(
  endpoint: SynthesizedEndpoint,
  respond: () => Promise<RestResponse>,
  item: { instance: Instance; gold: GoldResult },
  ctx: RestVerifyContext,
): Promise<{ outcome: Outcome<Verification>; response: RestResponse | null }> {
  let response: RestResponse | null = null;
  let call: Promise<RestResponse> | undefined;
  const subject = {
    endpoint,
    db: ctx.db,
    maxStringLength: ctx.maxStringLength,
    response: () => (call ??= respond().then((r) => (response = r))),
    instance: item.instance,
    gold: item.gold,
    judge: ctx.judge,
    onVariants: () => ctx.onVariants(endpoint, item.gold),
  };
  const { verification, failed } = await runChecks<RestSubject>(REST_CHECKS, subject);
  return { outcome: failed ? reject(failed.category, failed.message) : accept(verification), response };
}

/**
 * A served endpoint's response without the server: the body the server would send, or the
 * status it would answer (runtime/rest/errors.ts) with the failure's own message: SQL errors
 * keep SQLite's (the server hides it from clients; the retry loop's feedback needs it). Only
 * called on specs that passed the format check. Where the server would answer 503 (the
 * executor failed, not the query), this throws: no verdict.
 */
export async function directResponse(
  endpoint: SynthesizedEndpoint,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<RestResponse> {
  const spec = endpoint.spec;
  if (!isServed(spec)) throw new Error(`endpoint ${spec.operationId} has no response fields`);
  return answered(async () => {
    const result = await runEndpoint(spec, endpoint.call.arguments, db, executor, timeoutMs);
    return { status: 200, body: responseBody(spec.response, result.rows) };
  }, timeoutMs);
}

/**
 * A proposal's trial run: its SQL run with the call's arguments, and its response fields
 * made from the SQL and the rows seen (response-fields.ts). The endpoint comes back with its
 * response shaped, as it will be served; unshaped when the SQL failed (it goes no further).
 */
export async function trialRun(
  endpoint: SynthesizedEndpoint,
  gold: GoldResult,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<{ endpoint: SynthesizedEndpoint; response: RestResponse }> {
  let shaped = endpoint;
  // Called with the question's values, an endpoint is often its gold SQL: that run serves.
  const sameRowsAs = gold.fixedAnswer ? gold.executedSql : undefined;
  const response = await answered(async () => {
    const result = await runEndpoint(endpoint.spec, endpoint.call.arguments, db, executor, timeoutMs, sameRowsAs);
    const described = await describeParameterValues(endpoint.spec, endpoint.call.arguments, db, executor, timeoutMs);
    const spec = { ...described, response: describeResponse(endpoint.spec, db, result) };
    shaped = { ...endpoint, spec };
    return { status: 200, body: responseBody(spec.response, result.rows) };
  }, timeoutMs);
  return { endpoint: shaped, response };
}

/** The response of a run, or of its failure as the server would answer it, SQLite's message kept. */
async function answered(run: () => Promise<RestResponse>, timeoutMs: number): Promise<RestResponse> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof TransientError || isExecutorFault(error)) throw error;
    const { status, body } = toErrorResponse(error, timeoutMs);
    const message = error instanceof Error ? error.message : String(error);
    return { status, body: { error: { code: body.error.code, message } } };
  }
}

/** What the REST checks need of a REST stage's context. */
export function restVerifyContext(ctx: RestStageContext): RestVerifyContext {
  return {
    db: ctx.db,
    maxStringLength: ctx.config.rest.maxStringLength,
    judge: ctx.services.judge,
    onVariants: restOnVariants(ctx),
  };
}

/**
 * The endpoint, with the call's arguments, run on each variant the gold was run on: as the
 * server would answer there (the same SQL, bound the same way), without serving each variant.
 */
function restOnVariants(ctx: StageContext): RestVerifyContext['onVariants'] {
  return async (endpoint, gold) => {
    const runs: VariantRun[] = [];
    for (const variant of sampleVariants(ctx.config, gold)) {
      const there = onVariant(ctx, variant);
      const response = await directResponse(endpoint, there.db, there.executor, ctx.config.executeTimeoutMs);
      const run = restVariantRun(variant.name, response, endpoint.spec, gold);
      if (run) runs.push(run);
    }
    return runs;
  };
}
