import type { DatabaseInfo, SlotSequence, ToolPool } from '../../core/model.js';
import { accept, rejectionFrom, type Outcome } from '../../core/outcome.js';
import type { NormalizedQuery } from '../sql/ast.js';
import { SequenceBuilder, unsupported } from './builder.js';
import { QueryCompiler } from './query.js';

/**
 * slot.decompose: a normalized query as SLOT calls (docs/TOOLS.md). Rejects with
 * `unsupported:<construct>` what the pool's tools cannot express. Deterministic: labels are
 * numbered per prefix in emission order.
 */
export function decompose(query: NormalizedQuery, db: DatabaseInfo, pool: ToolPool): Outcome<SlotSequence> {
  const builder = new SequenceBuilder(db, pool);
  try {
    // No sequence of calls computes a fixpoint: a recursive WITH table, read anywhere, is refused.
    if (query.recursive) unsupported('recursive_cte', `a recursive WITH table (${query.recursive.join(', ')})`);
    const answerLabels = new QueryCompiler(builder).answer(query.query);
    return accept({ initialization: builder.initialization, calls: builder.calls, answerLabels });
  } catch (error) {
    const rejection = rejectionFrom<SlotSequence>(error);
    if (rejection) return rejection;
    throw error;
  }
}
