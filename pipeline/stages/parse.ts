import type { NormalizedQuery } from '../../generators/sql/ast.js';
import { lazy } from '../../core/lazy.js';
import type { ItemStage } from '../stage.js';
import { pinClock } from '../../generators/sql/clock.js';
import { clockKey } from './clock-key.js';
import { dbCacheKey } from './db-key.js';

const normalize = lazy(() => import('../../generators/sql/normalize.js'));

/** parse: gold SQL (its clock pinned) → normalized AST, double-quoted strings resolved against the schema (parse_error). */
export const parseStage: ItemStage<{ sql: string }, NormalizedQuery> = {
  kind: 'item',
  name: 'parse',
  version: 1,
  cacheKey: ({ sql }, ctx) => ({ sql, db: dbCacheKey(ctx.db), ...clockKey(sql, ctx.config) }),
  // The clock is pinned to the run's reference time (clock.ts): the calls see the moment gold saw.
  run: async ({ sql }, ctx) => (await normalize()).parseQuery(pinClock(sql, ctx.config.referenceTime), ctx.db),
};
