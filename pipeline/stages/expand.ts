import { lazy } from '../../core/lazy.js';
import type { SelSequence, SlotSequence } from '../../core/model.js';
import type { ItemStage } from '../stage.js';
import { dbCacheKey } from './db-key.js';

const expander = lazy(() => import('../../generators/sel/expand.js'));

/** sel.expand: SLOT sequence → SEL sequence: bindings over its key universe (unsupported:<construct>). */
export const expandStage: ItemStage<{ sequence: SlotSequence }, SelSequence> = {
  kind: 'item',
  name: 'sel.expand',
  version: 1,
  cacheKey: ({ sequence }, ctx) => ({ sequence, db: dbCacheKey(ctx.db), pool: ctx.config.pool }),
  run: async ({ sequence }, ctx) => (await expander()).expandToSel(sequence, ctx.db, ctx.config.pool),
};
