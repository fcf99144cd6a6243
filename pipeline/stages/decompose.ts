import type { NormalizedQuery } from '../../generators/sql/ast.js';
import { lazy } from '../../core/lazy.js';
import type { SlotSequence } from '../../core/model.js';
import type { ItemStage } from '../stage.js';
import { dbCacheKey } from './db-key.js';

const decomposer = lazy(() => import('../../generators/slot/decompose.js'));

/** slot.decompose: normalized AST → init step + labelled SLOT calls (unsupported:<construct>). */
export const decomposeStage: ItemStage<{ query: NormalizedQuery }, SlotSequence> = {
  kind: 'item',
  name: 'slot.decompose',
  version: 1,
  cacheKey: ({ query }, ctx) => ({ query, db: dbCacheKey(ctx.db), pool: ctx.config.pool }),
  run: async ({ query }, ctx) => (await decomposer()).decompose(query, ctx.db, ctx.config.pool),
};
