import type { Config } from '../../config/schema.js';
import { splitNested } from '../../generators/chain/nested.js';
import type { QuestionWriter } from '../../generators/chain/question-writer.js';
import type { NestedSource } from '../chain/nested-chains.js';
import { groupBy } from '../../core/group.js';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import type { ChainRejection } from '../chain/chains.js';
import type { ChainSample, FirstHop } from '../chain/sample.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { calledEndpoints } from '../emit-rest.js';
import type { AcceptedRestSample, ChainResult } from '../samples.js';
import { chainComposeStage } from '../stages/chain-compose.js';
import type { RestRunResult } from './rest.js';
import type { StageMetrics, StageRunner } from './stage-runner.js';

/**
 * The chain runner (issue 36): once a database's REST results are in, its chains are composed
 * (stages/chain-compose.ts, one cached outcome per database) and handed to the instances whose
 * REST samples are their first hops. An instance REST refused is refused for chains by the
 * same stage and category; one whose sample starts no chain says why (its 2-hop reason, then
 * its 3-hop one).
 */

export interface ChainRunOptions {
  config: Config;
  executor: SqlExecutor;
  writer: QuestionWriter;
  datasetName: string;
  /** Runs chain.compose; with a queue backend too, it computes: the driver composes chains as it assembles. */
  stageRunner: StageRunner;
}

export interface ChainRunResult {
  results: Map<Instance, ChainResult>;
  metrics: Map<string, StageMetrics>;
}

export async function runChains(
  part: { databases: readonly DatabaseInfo[]; instances: readonly Instance[] },
  rest: RestRunResult,
  { config, executor, writer, datasetName, stageRunner }: ChainRunOptions,
): Promise<ChainRunResult> {
  const results = new Map<Instance, ChainResult>();
  const accepted: [Instance, AcceptedRestSample][] = [];
  for (const instance of part.instances) {
    const result = rest.results.get(instance);
    if (!result) continue;
    if (result.ok) accepted.push([instance, result]);
    else results.set(instance, result);
  }
  const [db] = part.databases;
  if (!db || accepted.length === 0) return { results, metrics: stageRunner.metrics };
  const endpoints = calledEndpoints(accepted.map(([, sample]) => sample));
  const byId = new Map(endpoints.map((endpoint) => [endpoint.operationId, endpoint]));
  const firsts: FirstHop[] = accepted.map(([instance, sample]) => ({
    id: instance.id,
    question: instance.question,
    evidence: instance.evidence,
    endpoint: byId.get(sample.endpoint.spec.operationId)!,
    args: sample.endpoint.call.arguments,
  }));
  // A question whose gold SQL nests a subquery as a value is a chain of its own too.
  const nested: NestedSource[] = accepted.flatMap(([instance, sample]) =>
    splitNested(instance.sql)
      ? [
          {
            id: instance.id,
            question: instance.question,
            evidence: instance.evidence,
            sql: instance.sql,
            gold: {
              columns: sample.gold.columns,
              rows: sample.gold.rows,
              ordered: sample.gold.ordered,
              distinct: sample.gold.distinct,
              executedSql: sample.gold.executedSql,
            },
          },
        ]
      : [],
  );
  const outcome = await stageRunner.run(
    chainComposeStage,
    { firsts, endpoints, nested },
    { config, db, executor, writer, datasetName },
  );
  if (!outcome.ok) {
    for (const [instance] of accepted)
      results.set(instance, {
        ok: false,
        stage: 'chain.compose',
        category: outcome.category,
        message: outcome.message,
      });
    return { results, metrics: stageRunner.metrics };
  }
  const samples = groupByFirst(outcome.value.samples);
  const reasons = groupByFirst(outcome.value.without);
  for (const [instance] of accepted) {
    const own = samples.get(instance.id);
    results.set(instance, own ? { ok: true, samples: own } : rejectionOf(reasons.get(instance.id) ?? []));
  }
  return { results, metrics: stageRunner.metrics };
}

const groupByFirst = <T extends ChainSample | ChainRejection>(list: readonly T[]): Map<string, T[]> =>
  groupBy(list, (entry) => entry.firstId);

function rejectionOf(reasons: readonly ChainRejection[]): ChainResult {
  const [first] = reasons;
  return {
    ok: false,
    stage: 'chain.compose',
    category: first?.category ?? 'no_chain',
    message: reasons.map((r) => `${r.hops} hops: ${r.message}`).join('; ') || 'no chain',
  };
}
