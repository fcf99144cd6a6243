import { lazy } from '../../core/lazy.js';
import type { GoldResult, Instance } from '../../core/model.js';
import type { ItemStage } from '../stage.js';
import { clockKey } from './clock-key.js';
import { dbCacheKey } from './db-key.js';
import { goldOnVariants } from './gold-variants.js';
import { verificationRelevantConfig } from '../../config/schema.js';

const gold = lazy(() => import('../../generators/sql/gold.js'));

/**
 * gold: the gold SQL, executed read-only with a timeout (gold_error, gold_timeout), then on
 * the run's database variants (gold:nondeterministic, gold:weak:<strength>).
 */
export const goldStage: ItemStage<{ instance: Instance }, GoldResult> = {
  kind: 'item',
  name: 'gold',
  version: 3,
  cacheKey: ({ instance }, ctx) => ({
    sql: instance.sql,
    db: dbCacheKey(ctx.db),
    timeoutMs: ctx.config.goldTimeoutMs,
    ...clockKey(instance.sql, ctx.config),
    verification: verificationRelevantConfig(ctx.config.verification),
  }),
  async run({ instance }, ctx) {
    const outcome = await (
      await gold()
    ).runGold(instance, ctx.db, ctx.executor, ctx.config.goldTimeoutMs, ctx.config.referenceTime);
    return outcome.ok ? goldOnVariants(outcome.value, ctx) : outcome;
  },
};
