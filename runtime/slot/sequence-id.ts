import { canonicalJson } from '../../core/hash.js';
import type { DatabaseInfo, SlotSequence, ToolPool } from '../../core/model.js';

/**
 * What a sequence's compilation depends on, as a memo key: the database, the pool and the
 * calls. Canonical (object keys sorted): a SEL call mapped back onto its SLOT call carries its
 * bound arguments last (runtime/sel/execute.ts), and compiling reads arguments by name, so the
 * two share one compilation.
 */
export function compiledSequenceId(
  db: DatabaseInfo,
  pool: ToolPool,
  seq: Pick<SlotSequence, 'initialization' | 'calls'>,
): string {
  return canonicalJson([db.fingerprint, db.path, pool, seq.initialization, seq.calls]);
}
