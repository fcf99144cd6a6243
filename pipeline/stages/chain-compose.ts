import { lazy } from '../../core/lazy.js';
import { accept } from '../../core/outcome.js';
import type { ChainRun } from '../chain/chains.js';
import type { FirstHop } from '../chain/sample.js';
import type { NestedSource } from '../chain/nested-chains.js';
import type { ServedEndpointSpec } from '../../runtime/rest/spec.js';
import { verificationRelevantConfig } from '../../config/schema.js';
import type { QuestionWriter } from '../../generators/chain/question-writer.js';
import type { DatabaseStage, StageContext } from '../stage.js';
import { dbCacheKey } from './db-key.js';

const chains = lazy(() => import('../chain/chains.js'));

/**
 * chain.compose, the per-database barrier after REST (issue 36): the database's verified REST
 * samples are the first hops, the endpoints they call are the hops that may follow, and the
 * chains that verify on the database and its variants are its chain samples
 * (generators/chain), their questions written by the run's writer. Cached like rest.dedup,
 * by everything it reads.
 */

export interface ChainComposeInput {
  /** The database's verified REST samples, in instance order. */
  firsts: FirstHop[];
  /** The endpoints they call, each once: what is served, so what a chain may call. */
  endpoints: ServedEndpointSpec[];
  /** The verified questions whose gold SQL nests a subquery as a value (pipeline/chain/nested-chains.ts). */
  nested: NestedSource[];
}

export interface ChainStageContext extends StageContext {
  writer: QuestionWriter;
  datasetName: string;
}

export const chainComposeStage: DatabaseStage<ChainComposeInput, ChainRun, ChainStageContext> = {
  kind: 'barrier',
  name: 'chain.compose',
  version: 3,
  cacheKey: ({ firsts, endpoints, nested }, ctx) => ({
    db: dbCacheKey(ctx.db),
    firsts,
    endpoints,
    nested,
    datasetName: ctx.datasetName,
    maxStringLength: ctx.config.rest.maxStringLength,
    chain: ctx.config.chain,
    writer: ctx.writer.fingerprint,
    verification: verificationRelevantConfig(ctx.config.verification),
    executeTimeoutMs: ctx.config.executeTimeoutMs,
  }),
  run: async ({ firsts, endpoints, nested }, ctx) =>
    accept(
      await (
        await chains()
      ).composeChains(firsts, endpoints, nested, ctx, {
        attempts: ctx.config.chain.attempts,
        perFirst: ctx.config.chain.perFirst,
        concurrency: ctx.config.concurrency,
        writer: ctx.writer,
        datasetName: ctx.datasetName,
      }),
    ),
};
