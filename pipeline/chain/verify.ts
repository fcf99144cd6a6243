import type { Config } from '../../config/schema.js';
import type { DatabaseInfo, SqlValue, Verdict } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { resultShape } from '../../runtime/sql/result-shape.js';
import { onVariant, variantsOf, type Variant } from '../variants.js';
import { compareWithGold } from '../../verifiers/compare.js';
import type { ComposedStatement } from '../../generators/chain/compose.js';
import { chainIgnoresRowOrder } from '../../generators/chain/row-order.js';
import {
  composedOf,
  endpointCaller,
  runComposed,
  runHopByHop,
  type ChainHopPlan,
  type EndpointCall,
  type HopByHop,
} from '../../generators/chain/run.js';

/**
 * A chain is kept only if it means one thing (issue 36): run hop by hop and as its composed
 * statement, the two agree on the database and on every differential variant (the same rows
 * read in another order, and value-perturbed copies: pipeline/variants.ts), every link makes
 * exactly one value on each of them, and the answer does not depend on the order rows are
 * read in. A chain whose answer is empty on the database proves nothing and is refused too.
 */

export interface VerifiedChain {
  /** The run on the database itself: the sample's responses, bridges and answer. */
  run: HopByHop;
  composed: ComposedStatement;
  /**
   * Per variant, the answer there (what a sample on that variant must give), or `open`: a
   * link found no value there (the first hop's values are not in the perturbed rows), so an
   * agent has nothing to call the next hop with, and the variant decides nothing. `proven`:
   * the reordered variant's answer is the database's by construction (no hop's answer depends
   * on row order: generators/chain/row-order.ts), so it was not run.
   */
  variants: ({ variant: string; answer: SqlValue[][]; proven?: true } | { variant: string; open: true })[];
  /** How the two ways agreed on the database (compare.ts's rule). */
  agreement: Verdict;
}

export interface ChainContext {
  config: Config;
  db: DatabaseInfo;
  executor: SqlExecutor;
}

/** A database state: what runs SQL there, and its endpoint calls, each distinct call made once (run.ts endpointCaller). */
interface ChainState {
  ctx: ChainContext;
  call: EndpointCall;
}

/** The database and each variant, as states made once. */
export class ChainStates {
  private readonly states = new Map<string, ChainState>();
  constructor(readonly ctx: ChainContext) {}

  /** The database itself (no variant), or a variant. */
  of(variant?: Variant): ChainState {
    const name = variant?.name ?? '';
    let state = this.states.get(name);
    if (!state) {
      const ctx = variant ? { ...this.ctx, ...onVariant(this.ctx, variant) } : this.ctx;
      this.states.set(name, (state = { ctx, call: endpointCaller(ctx.db, ctx.executor, ctx.config.executeTimeoutMs) }));
    }
    return state;
  }
}

/** The chain on the database itself: run hop by hop (the links each make one value), not empty. */
export async function runOnDatabase(hops: readonly ChainHopPlan[], states: ChainStates): Promise<Outcome<HopByHop>> {
  const run = await runHopByHop(hops, states.of().call, true);
  if (!run.ok) return run;
  if (run.value.answer.length === 0 || run.value.answer.every((row) => row.every((v) => v === null)))
    return reject('empty_answer', 'the chain answers no value on the database');
  return run;
}

/**
 * The composed statement against `run` (runOnDatabase's) on the database, then both ways on
 * every variant. On a value-perturbed variant a link may find no value at all (the first hop's
 * values are not in the rotated rows): an agent has nothing to call the next hop with, and the
 * variant is recorded open: it decides nothing. A link with several values is ambiguous there
 * as anywhere.
 */
export async function verifyChain(
  hops: readonly ChainHopPlan[],
  run: HopByHop,
  states: ChainStates,
): Promise<Outcome<VerifiedChain>> {
  const { ctx } = states;
  const lastSql = hops[hops.length - 1].endpoint.sql;
  const composed = composedOf(
    hops,
    run.responses.map((r) => r.columns.length),
  );
  const agreement = await agreeOn(composed, run.answer, lastSql, ctx);
  if (!agreement.ok) return agreement;
  const variants: VerifiedChain['variants'] = [];
  const inAnyOrder = chainIgnoresRowOrder(
    hops.map((hop) => hop.endpoint),
    ctx.db,
  );
  for (const variant of variantsOf(ctx.config.verification)) {
    // The same rows in another order: an answer that provably ignores row order is the same there.
    if (variant.seed === null && inAnyOrder) {
      variants.push({ variant: variant.name, answer: run.answer, proven: true });
      continue;
    }
    const there = states.of(variant);
    const hopByHop = await runHopByHop(hops, there.call);
    if (!hopByHop.ok && hopByHop.category === 'bridge_empty') {
      variants.push({ variant: variant.name, open: true });
      continue;
    }
    if (!hopByHop.ok) return reject(`${variant.name}:${hopByHop.category}`, hopByHop.message);
    const answer = hopByHop.value.answer;
    const agreed = await agreeOn(composed, answer, lastSql, there.ctx);
    if (!agreed.ok) return reject(`${variant.name}:${agreed.category}`, agreed.message);
    // The same rows in another order: the answer must not move.
    if (variant.seed === null && !compared(run.answer, answer, lastSql).ok)
      return reject('nondeterministic', 'the answer depends on the order the rows are read in');
    variants.push({ variant: variant.name, answer });
  }
  return accept({ run, composed, variants, agreement: agreement.value });
}

/** The composed statement gives what the hops gave, on this state. */
async function agreeOn(
  composed: ComposedStatement,
  answer: SqlValue[][],
  lastSql: string,
  ctx: ChainContext,
): Promise<Outcome<Verdict>> {
  const rows = await runComposed(composed, { sql: lastSql }, ctx.db, ctx.executor, ctx.config.executeTimeoutMs);
  if (!rows.ok) return rows;
  const verdict = compared(answer, rows.value, lastSql);
  return verdict.ok
    ? accept(verdict)
    : reject('disagrees', `hop by hop and the composed statement differ: ${verdict.message}`);
}

function compared(a: SqlValue[][], b: SqlValue[][], lastSql: string): Verdict {
  const width = Math.max(a[0]?.length ?? 0, b[0]?.length ?? 0);
  const columns = Array.from({ length: width }, (_, i) => `c${i}`);
  return compareWithGold([{ kind: 'table', columns, rows: a }], {
    columns,
    rows: b,
    executedSql: lastSql,
    ordered: resultShape(lastSql).ordered,
    distinct: false,
  });
}
