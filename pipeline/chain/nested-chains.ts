import type { GoldResult, Instance, ResultSet, SqlValue } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { checkContext, checkLeaks } from '../../generators/chain/question.js';
import { splitNested } from '../../generators/chain/nested.js';
import { describeResponse } from '../../generators/rest/response-fields.js';
import { EndpointNaming } from '../../generators/rest/dedup.js';
import { synthesizeFromTemplate } from '../../generators/rest/template.js';
import { runEndpoint } from '../../runtime/rest/endpoint.js';
import { responseBody } from '../../runtime/rest/response.js';
import type { ServedEndpointSpec, SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { SqlExecutionError, SqlTimeoutError } from '../../runtime/sql/executor.js';
import { compareWithGold } from '../../verifiers/compare.js';
import { checkRestFormat } from '../../verifiers/rest.js';
import type { ChainHop, ChainSample } from './sample.js';
import { runOnDatabase, verifyChain, type ChainContext, type ChainStates } from './verify.js';

/**
 * Chains of a question whose gold SQL already nests (issue 36): `WHERE x = (SELECT …)` or
 * `x IN (SELECT …)`, the subquery hop 1 and the statement around it hop 2, each made an
 * endpoint by the template synthesizer (the subquery's own literals its parameters; the outer
 * statement's with the subquery's value written in, that value's parameter the one hop 1
 * fills). The question is the source's own. Kept only if hop 1 gives one value, both endpoints
 * pass REST's format check, the chain verifies as any chain does (verify.ts: hop by hop and
 * composed, on the database and its variants), and its answer is the question's gold answer.
 * Its endpoints are served beside REST's (emit-rest.ts), renamed where a name is taken.
 */

/** A question whose verified gold SQL may nest. */
export interface NestedSource {
  id: string;
  question: string;
  evidence: string;
  sql: string;
  /** Its verified gold answer (what the chain must answer on the database). */
  gold: Pick<GoldResult, 'columns' | 'rows' | 'ordered' | 'distinct' | 'executedSql'>;
}

export async function nestedChain(
  source: NestedSource,
  states: ChainStates,
  datasetName: string,
  names: EndpointNames,
): Promise<Outcome<ChainSample>> {
  const { ctx } = states;
  const split = splitNested(source.sql);
  if (!split) return reject('nested:no_subquery', 'the gold SQL nests no subquery as a value');
  const instance = (id: string, sql: string): Instance => ({
    id,
    index: 0,
    dbId: ctx.db.dbId,
    question: source.question,
    evidence: source.evidence,
    sql,
    difficulty: null,
  });
  const first = await servedEndpoint(
    synthesizeFromTemplate(instance(`${source.id}.inner`, split.inner), ctx.db, datasetName),
    ctx,
  );
  if (!first.ok) return reject(`nested:${first.category}`, `hop 1: ${first.message}`);
  const bridge = oneValue(first.value.result);
  if (!bridge.ok) return bridge;
  const outer = synthesizeFromTemplate(instance(`${source.id}.outer`, split.outer(bridge.value)), ctx.db, datasetName);
  const second = await servedEndpoint(outer, ctx);
  if (!second.ok) return reject(`nested:${second.category}`, `hop 2: ${second.message}`);
  const linked = Object.entries(second.value.call.arguments).filter(([, value]) => value === bridge.value);
  if (linked.length !== 1)
    return reject('nested:no_single_parameter', `${linked.length} of hop 2's parameters take the subquery's value`);
  const [param] = linked[0];
  const firstSpec = names.served(first.value.spec);
  const secondSpec = names.served(second.value.spec);
  const { [param]: _bridged, ...rest } = second.value.call.arguments;
  const hops: ChainHop[] = [
    { endpoint: firstSpec, args: first.value.call.arguments },
    {
      endpoint: secondSpec,
      args: rest,
      link: { param, field: firstSpec.response.fields[0].name, fieldIndex: 0, transform: 'value' },
    },
  ];
  const context = checkContext(source.question, source.evidence, first.value.call.arguments);
  if (!context.ok) return reject(`question:${context.category}`, context.message);
  const plans = hops.map((hop) => ({ endpoint: hop.endpoint, args: hop.args, link: hop.link }));
  const run = await runOnDatabase(plans, states);
  if (!run.ok) return run;
  const leaks = checkLeaks(source.question, run.value.bridges, run.value.answer);
  if (!leaks.ok) return reject(`question:${leaks.category}`, leaks.message);
  const asGold = compareWithGold(
    [{ kind: 'table', columns: source.gold.columns, rows: run.value.answer }],
    source.gold,
  );
  if (!asGold.ok)
    return reject('nested:not_the_gold', `the chain answers otherwise than the question's gold: ${asGold.message}`);
  const verified = await verifyChain(plans, run.value, states);
  if (!verified.ok) return verified;
  return accept({
    id: `${source.id}.sql`,
    firstId: source.id,
    question: source.question,
    evidence: source.evidence,
    components: [firstSpec.summary, secondSpec.summary],
    writer: { name: 'source' },
    origin: 'nested_sql',
    hops,
    responses: verified.value.run.responses.map((response, i) =>
      responseBody(hops[i].endpoint.response, response.rows),
    ),
    bridges: run.value.bridges,
    verified: verified.value,
  });
}

/** The template's endpoint, format-checked, run once on the database for its response's shape. */
async function servedEndpoint(
  synthesized: Outcome<SynthesizedEndpoint>,
  ctx: ChainContext,
): Promise<Outcome<{ spec: ServedEndpointSpec; call: SynthesizedEndpoint['call']; result: ResultSet }>> {
  if (!synthesized.ok) return synthesized;
  const format = checkRestFormat(synthesized.value, ctx.db, ctx.config.rest.maxStringLength);
  if (!format.ok) return reject(format.category, format.message);
  const { spec, call } = synthesized.value;
  try {
    const result = await runEndpoint(spec, call.arguments, ctx.db, ctx.executor, ctx.config.executeTimeoutMs);
    return accept({
      spec: { ...spec, response: describeResponse(spec, ctx.db, result) },
      call,
      result,
    });
  } catch (error) {
    if (error instanceof SqlExecutionError || error instanceof SqlTimeoutError)
      return reject('execution', `it does not run alone (${error.message}): it reads the outer query`);
    throw error;
  }
}

/** Hop 1's one value: one column, and one distinct value that is not NULL. */
function oneValue(result: ResultSet): Outcome<SqlValue> {
  const values = [...new Set(result.rows.map((row) => row[0]))];
  if (result.columns.length !== 1 || values.length !== 1 || values[0] === null)
    return reject(
      'nested:bridge_ambiguous',
      `the subquery gives ${result.columns.length} column(s) and ${values.length} value(s), not one value`,
    );
  return accept(values[0]);
}

/**
 * Names that stay unique among the database's served endpoints, as dedup keeps them apart
 * (EndpointNaming): an endpoint the same as one served (its SQL and parameters) is that one;
 * another that takes a served name gets dedup's suffix.
 */
export class EndpointNames {
  private readonly bySql = new Map<string, ServedEndpointSpec>();
  private readonly naming = new EndpointNaming();

  constructor(served: readonly ServedEndpointSpec[]) {
    for (const spec of served) this.add(spec);
  }

  served(spec: ServedEndpointSpec): ServedEndpointSpec {
    return this.bySql.get(identity(spec)) ?? this.add(spec);
  }

  private add(spec: ServedEndpointSpec): ServedEndpointSpec {
    const named = this.naming.named(spec);
    this.bySql.set(identity(named), named);
    return named;
  }
}

const identity = (spec: ServedEndpointSpec) => JSON.stringify([spec.sql, spec.parameters.map((p) => [p.name, p.type])]);
