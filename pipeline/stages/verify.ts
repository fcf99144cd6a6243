import type { ToolSpec } from '../../core/model.js';
import { accept, reject, TransientError } from '../../core/outcome.js';
import { isExecutorFault } from '../../runtime/sql/executor.js';
import type { VariantRun } from '../../verifiers/differential.js';
import type { KeyRun } from '../../verifiers/dependencies.js';
import { countKeys } from '../data-keys.js';
import { onVariant, VariantBuildError, sampleVariants } from '../variants.js';
import { lazy } from '../../core/lazy.js';
import type { VerifyInput } from '../runner/flow.js';
import type { Verification } from '../../verifiers/checks.js';
import { sequenceDef } from '../formulations.js';
import type { ItemStage, StageContext } from '../stage.js';
import { toolRegistry } from '../tool-registry.js';
import { dbCacheKey } from './db-key.js';

// ajv and zod: loaded only when something is verified.
const checks = lazy(() => import('../../verifiers/checks.js'));

/**
 * verify: the sequence checks (verifiers/checks.ts), in order; the first failing verdict
 * rejects the sample with its category. An accepted sample keeps every verdict; the
 * semantic verdict's category names the comparison rule that decided.
 */
export const verifyStage: ItemStage<VerifyInput, Verification> = {
  kind: 'item',
  name: 'verify',
  version: 1,
  cacheKey: (input, ctx) => ({ ...input, db: dbCacheKey(ctx.db), pool: ctx.config.pool }),
  async run(input, ctx) {
    const { runChecks, SEQUENCE_CHECKS } = await checks();
    const subject = {
      sequence: input.sequence,
      tools: toolsOf(input, ctx),
      execution: input.execution,
      gold: input.gold,
      onVariants: () => onVariants(input, ctx),
      keyRuns: () => keyRuns(input, ctx),
    };
    const { verification, failed } = await runChecks(SEQUENCE_CHECKS, subject);
    return failed ? reject(failed.category, failed.message) : accept(verification);
  },
};

/** The sequence run on each variant the gold ran on: its answer outputs, or the failure of its calls there. */
async function onVariants(input: VerifyInput, ctx: StageContext): Promise<VariantRun[]> {
  const options = { timeoutMs: ctx.config.executeTimeoutMs, pool: ctx.config.pool };
  const runs: VariantRun[] = [];
  for (const variant of sampleVariants(ctx.config, input.gold)) {
    const there = onVariant(ctx, variant);
    try {
      const outputs = await sequenceDef(input.formulation).execute(input.sequence, there.db, there.executor, options);
      runs.push({ variant: variant.name, outputs });
    } catch (error) {
      if (error instanceof TransientError || isExecutorFault(error) || error instanceof VariantBuildError) throw error;
      runs.push({ variant: variant.name, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return runs;
}

/**
 * The sequence's data keys counted on the database, then on each variant it is verified on
 * (the value-perturbed ones: `reordered` holds the very same rows). A variant's count reads
 * its copy of the table, as the sequence's statements there do; a failure to count is ours,
 * thrown (never a verdict).
 */
async function keyRuns(input: VerifyInput, ctx: StageContext): Promise<KeyRun[]> {
  const keys = input.sequence.dataDependencies ?? [];
  const common = { run: ctx.executor, timeoutMs: ctx.config.goldTimeoutMs };
  const runs = [{ variant: 'original', counts: await countKeys({ ...ctx, ...common, state: 'original' }, keys) }];
  for (const variant of sampleVariants(ctx.config, input.gold)) {
    const there = onVariant(ctx, variant);
    const { seed, mode } = variant;
    const state = JSON.stringify({ seed, mode, rows: ctx.config.verification.variantRows });
    runs.push({ variant: variant.name, counts: await countKeys({ ...there, ...common, state }, keys) });
  }
  return runs;
}

/**
 * The specs of the tools the sequence calls, over the universe its formulation gives it
 * (formulations.ts). Building only these matters: a SEL universe has a getter per column,
 * every SLOT spec lists every key.
 */
function toolsOf(input: VerifyInput, ctx: StageContext): ToolSpec[] {
  const called = new Set(input.sequence.calls.map((call) => call.name));
  return sequenceDef(input.formulation).tools(input.sequence, toolRegistry(ctx.db, ctx.config.pool), called);
}
