import type { NormalizedQuery } from '../../generators/sql/ast.js';
import { lazy } from '../../core/lazy.js';
import type { ItemStage } from '../stage.js';
import { dbCacheKey } from './db-key.js';

const normalize = lazy(() => import('../../generators/sql/normalize.js'));

/** parse: gold SQL → normalized AST, double-quoted strings resolved against the schema (parse_error). */
export const parseStage: ItemStage<{ sql: string }, NormalizedQuery> = {
  kind: 'item',
  name: 'parse',
  version: 1,
  cacheKey: ({ sql }, ctx) => ({ sql, db: dbCacheKey(ctx.db) }),
  run: async ({ sql }, ctx) => (await normalize()).parseQuery(sql, ctx.db),
};
