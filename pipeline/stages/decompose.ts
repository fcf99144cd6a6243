import type { NormalizedQuery } from '../../generators/sql/ast.js';
import { lazy } from '../../core/lazy.js';
import type { DataKey, SlotSequence } from '../../core/model.js';
import { accept, type Outcome } from '../../core/outcome.js';
import { countKeys } from '../data-keys.js';
import type { ItemStage, StageContext } from '../stage.js';
import { keyHolds, keyName } from '../../verifiers/dependencies.js';
import { dbCacheKey } from './db-key.js';

const decomposer = lazy(() => import('../../generators/slot/decompose.js'));
const dependencies = lazy(() => import('../../generators/slot/dependencies.js'));

const BARE_COLUMN = 'unsupported:bare_column';

/**
 * slot.decompose: normalized AST → init step + labelled SLOT calls (unsupported:<construct>).
 * A query refused only for a bare column the schema's keys do not determine is decomposed
 * again with the keys the data proves (`dataKeysFor`); the sequence then names those it
 * relied on (`dataDependencies`), which verification proves again on every variant. The
 * database's content is in the key (`dbCacheKey`): a cached verdict that read the data is
 * never served for other data.
 */
export const decomposeStage: ItemStage<{ query: NormalizedQuery }, SlotSequence> = {
  kind: 'item',
  name: 'slot.decompose',
  version: 1,
  cacheKey: ({ query }, ctx) => ({ query, db: dbCacheKey(ctx.db), pool: ctx.config.pool }),
  async run({ query }, ctx) {
    const outcome = (await decomposer()).decompose(query, ctx.db, ctx.config.pool);
    return outcome.ok || outcome.category !== BARE_COLUMN ? outcome : dataKeysFor(query, ctx, outcome);
  },
};

/**
 * `query` decomposed with the keys its data proves, asked for a few at a time: the columns
 * that could help (`dataKeyCandidates`) are counted on the database, and those that are keys
 * make more columns determined, which may make others candidates. Accepted, the sequence
 * relies on a minimal set of them (each dropped in turn if the decomposition needs it not);
 * when no proof helps, the refusal stands, saying which columns the data refuted.
 */
async function dataKeysFor(
  query: NormalizedQuery,
  ctx: StageContext,
  refusal: Outcome<SlotSequence> & { ok: false },
): Promise<Outcome<SlotSequence>> {
  const { decompose } = await decomposer();
  const { dataKeyCandidates, withDataKeys } = await dependencies();
  const attempt = (keys: readonly DataKey[]) => decompose(query, withDataKeys(ctx.db, keys), ctx.config.pool);
  const { db, executor } = ctx;
  const target = { db, executor, run: executor, state: 'original', timeoutMs: ctx.config.goldTimeoutMs };
  const asked = new Set<string>();
  const proven: DataKey[] = [];
  for (;;) {
    const candidates = dataKeyCandidates(query.query, withDataKeys(ctx.db, proven)).filter(
      (key) => !asked.has(keyName(key)),
    );
    if (candidates.length === 0) break;
    candidates.forEach((key) => asked.add(keyName(key)));
    const counts = await countKeys(target, candidates);
    const keys = candidates.filter((_, i) => keyHolds(counts[i]));
    if (keys.length === 0) continue;
    proven.push(...keys);
    const outcome = attempt(proven);
    if (!outcome.ok && outcome.category !== BARE_COLUMN) return outcome;
    if (!outcome.ok) continue;
    const used = minimal(proven, (k) => attempt(k).ok);
    const sequence = attempt(used);
    return sequence.ok ? accept({ ...sequence.value, dataDependencies: used }) : sequence;
  }
  const refuted = [...asked].filter((name) => !proven.some((key) => keyName(key) === name));
  return refuted.length === 0
    ? refusal
    : { ...refusal, message: `${refusal.message} (no key in the data: ${refuted.join('; ')})` };
}

/** `keys` less each one `enough` does not need, in turn. */
function minimal(keys: readonly DataKey[], enough: (keys: readonly DataKey[]) => boolean): DataKey[] {
  let kept = [...keys];
  for (const key of keys) {
    const without = kept.filter((k) => k !== key);
    if (enough(without)) kept = without;
  }
  return kept;
}
