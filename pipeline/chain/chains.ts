import pLimit from 'p-limit';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { responseBody } from '../../runtime/rest/response.js';
import type { ServedEndpointSpec } from '../../runtime/rest/spec.js';
import { continuations, HopGraph, type Continuation } from '../../generators/chain/candidates.js';
import { provenKeys } from '../../generators/chain/proven-keys.js';
import { checkContext, checkLeaks, templateQuestion } from '../../generators/chain/question.js';
import type { QuestionWriter } from '../../generators/chain/question-writer.js';
import type { ChainHopPlan } from '../../generators/chain/run.js';
import { EndpointNames, nestedChain, type NestedSource } from './nested-chains.js';
import type { ChainHop, ChainSample, FirstHop } from './sample.js';
import { ChainStates, runOnDatabase, verifyChain, type ChainContext } from './verify.js';

/**
 * A database's chain samples (issue 36): from each verified REST sample as the first hop, per
 * length (2 and 3 hops), the first `perFirst` continuations (generators/chain/candidates.ts, in
 * their seeded order) that verify (verify.ts) and whose question passes its checks
 * (generators/chain/question.ts), trying at most `attempts`. Every try that fails is counted
 * by why. The template's question is checked before verification (a chain whose question
 * would leak is not verified); the run's writer (the template, or an LLM:
 * generators/chain/question-writer.ts) writes the question of a verified chain.
 */

export interface ChainOptions {
  /** Continuations tried per first hop and chain length (those whose links make no single value on the database aside). */
  attempts: number;
  /** Chains kept per first hop and chain length, at most. */
  perFirst: number;
  /** Chains composed at once. */
  concurrency: number;
  writer: QuestionWriter;
  /** In the paths of the endpoints made of nested gold SQL. */
  datasetName: string;
}

export interface ChainRun {
  samples: ChainSample[];
  /** Failed tries by category (`<hops>-hop:<category>`). */
  refused: Record<string, number>;
  /**
   * Per first hop and length that gave no chain, why: the last try's refusal, `no_link` when no
   * endpoint can follow, `no_single_value` when no link made one value on the database.
   */
  without: ChainRejection[];
}

export interface ChainRejection {
  firstId: string;
  hops: 2 | 3;
  category: string;
  message: string;
}

export async function composeChains(
  firsts: readonly FirstHop[],
  endpoints: readonly ServedEndpointSpec[],
  nested: readonly NestedSource[],
  ctx: ChainContext,
  options: ChainOptions,
): Promise<ChainRun> {
  const graph = new HopGraph(endpoints, ctx.db, await provenKeys(ctx.db, ctx.executor, ctx.config.executeTimeoutMs));
  const refused: Record<string, number> = {};
  const limit = pLimit(options.concurrency);
  const refuse = (key: string) => (refused[key] = (refused[key] ?? 0) + 1);
  const found = await Promise.all(
    firsts.flatMap((first) => {
      // The later hops take nothing from the question: the first hop's values must be in it.
      const context = checkContext(first.question, first.evidence, first.args);
      return ([2, 3] as const).map((length) =>
        limit(async (): Promise<ChainSample[] | ChainRejection> => {
          const none = (category: string, message: string): ChainRejection => ({
            firstId: first.id,
            hops: length,
            category,
            message,
          });
          if (!context.ok) {
            refuse(`${length}-hop:question:${context.category}`);
            return none(`question:${context.category}`, context.message);
          }
          const kept: ChainSample[] = [];
          // Per task: the calls its chains share are made once (its first hop's, its second hops').
          const states = new ChainStates(ctx);
          let tried = 0;
          let seen = 0;
          let last: { category: string; message: string } | undefined;
          for (const continuation of continuations(graph, first.endpoint, length, `${ctx.db.dbId}/${first.id}`)) {
            seen++;
            const outcome = await chainOf(first, continuation, kept.length + 1, states, options.writer);
            // A link that makes no single value on the database is not a try: nothing else ran.
            if (!outcome.ok && UNTRIED.has(outcome.category)) continue;
            if (outcome.ok) {
              if (kept.push(outcome.value) >= options.perFirst) break;
            } else {
              refuse(`${length}-hop:${outcome.category}`);
              last = outcome;
            }
            if (++tried >= options.attempts) break;
          }
          if (kept.length > 0) return kept;
          if (last) return none(last.category, last.message);
          return seen === 0
            ? none('no_link', `no endpoint takes a value of ${first.endpoint.operationId}'s response`)
            : none('no_single_value', `none of the ${seen} links makes one value of the responses on the database`);
        }),
      );
    }),
  );
  // One at a time, in source order: the endpoints they add are named in that order.
  const names = new EndpointNames(endpoints);
  const fromSql: (ChainSample | ChainRejection)[] = [];
  for (const source of nested) {
    const outcome = await nestedChain(source, new ChainStates(ctx), options.datasetName, names);
    if (!outcome.ok) refuse(`nested:${outcome.category.replace(/^nested:/, '')}`);
    fromSql.push(
      outcome.ok
        ? outcome.value
        : { firstId: source.id, hops: 2, category: outcome.category, message: outcome.message },
    );
  }
  // In first-hop order, then length, then the nested statements': the same order whatever finished first.
  return {
    samples: [
      ...found.filter((f) => Array.isArray(f)).flat(),
      ...fromSql.filter((f): f is ChainSample => 'verified' in f),
    ],
    refused: Object.fromEntries(Object.entries(refused).sort(([a], [b]) => (a < b ? -1 : 1))),
    without: [
      ...found.filter((f): f is ChainRejection => !Array.isArray(f)),
      ...fromSql.filter((f): f is ChainRejection => !('verified' in f)),
    ],
  };
}

function hopsOf(first: FirstHop, continuation: Continuation): ChainHop[] {
  return [
    { endpoint: first.endpoint, args: { ...first.args } },
    ...continuation.map((next, i) => {
      const before = i === 0 ? first.endpoint : continuation[i - 1].endpoint;
      return {
        endpoint: next.endpoint,
        args: {},
        link: { ...next.link, field: before.response.fields[next.link.fieldIndex].name },
      };
    }),
  ];
}

const planOf = (hops: readonly ChainHop[]): ChainHopPlan[] =>
  hops.map((hop) => ({ endpoint: hop.endpoint, args: hop.args, link: hop.link }));

/** What the database's own run says of the links before anything else runs. */
const UNTRIED = new Set(['bridge_ambiguous', 'bridge_empty']);

/** `n`: the chain's number among its first hop's chains of its length. */
async function chainOf(
  first: FirstHop,
  continuation: Continuation,
  n: number,
  states: ChainStates,
  writer: QuestionWriter,
): Promise<Outcome<ChainSample>> {
  const hops = hopsOf(first, continuation);
  const plans = planOf(hops);
  const run = await runOnDatabase(plans, states);
  if (!run.ok) return run;
  const leaks = checkLeaks(templateQuestion(first.question, hops).question, run.value.bridges, run.value.answer);
  if (!leaks.ok) return reject(`question:${leaks.category}`, leaks.message);
  const verified = await verifyChain(plans, run.value, states);
  if (!verified.ok) return verified;
  const written = await writer.write({ first, hops, bridges: run.value.bridges, answer: run.value.answer });
  if (!written.ok) return written;
  const { question, components, writer: name, fallback } = written.value;
  return accept({
    id: `${first.id}.${hops.length}.${n}`,
    firstId: first.id,
    question,
    evidence: first.evidence,
    components,
    writer: { name, ...(fallback ? { fallback } : {}) },
    origin: 'endpoints',
    hops,
    responses: run.value.responses.map((response, i) => responseBody(hops[i].endpoint.response, response.rows)),
    bridges: run.value.bridges,
    verified: verified.value,
  });
}
