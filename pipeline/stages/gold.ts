import { lazy } from '../../core/lazy.js';
import type { GoldResult, Instance } from '../../core/model.js';
import type { ItemStage } from '../stage.js';
import { clockKey } from './clock-key.js';
import { dbCacheKey } from './db-key.js';

const gold = lazy(() => import('../../generators/sql/gold.js'));

/** gold: the gold SQL, executed read-only with a timeout (gold_error, gold_timeout). */
export const goldStage: ItemStage<{ instance: Instance }, GoldResult> = {
  kind: 'item',
  name: 'gold',
  version: 1,
  cacheKey: ({ instance }, ctx) => ({
    sql: instance.sql,
    db: dbCacheKey(ctx.db),
    timeoutMs: ctx.config.goldTimeoutMs,
    ...clockKey(instance.sql, ctx.config),
  }),
  run: async ({ instance }, ctx) =>
    (await gold()).runGold(instance, ctx.db, ctx.executor, ctx.config.goldTimeoutMs, ctx.config.referenceTime),
};
