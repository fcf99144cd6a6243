import { pino } from 'pino';
import { synthesizeFromTemplate } from '../generators/rest/template.js';
import type { SynthesizedEndpoint } from '../runtime/rest/spec.js';
import type { DatabaseInfo, Instance } from '../core/model.js';
import { createRestServer } from '../runtime/rest/server.js';
import { measureThroughput, type Throughput } from '../runtime/rest/throughput.js';
import { createSqlPool } from '../runtime/sql/pool.js';

/**
 * REST server throughput on loopback for three representative endpoints, synthesized by the
 * template synthesizer from the first source questions of each shape: a simple lookup, a
 * join with an aggregate, an ORDER BY … LIMIT. Served by the real server over the killable
 * SQL pool, loaded with autocannon.
 */

export interface EndpointThroughput extends Throughput {
  shape: string;
  instanceId: string;
  operationId: string;
}

const SHAPES: { shape: string; matches: (sql: string) => boolean }[] = [
  { shape: 'simple lookup', matches: (sql) => !/\bJOIN\b|\(|\bORDER\b|\bGROUP\b/i.test(sql) && /\bWHERE\b/i.test(sql) },
  {
    shape: 'join + aggregate',
    matches: (sql) => /\bJOIN\b/i.test(sql) && /\b(COUNT|SUM|AVG)\s*\(/i.test(sql) && !/\bORDER\b/i.test(sql),
  },
  {
    shape: 'ORDER BY … LIMIT',
    matches: (sql) => /\bORDER\s+BY\b[\s\S]*\bLIMIT\b/i.test(sql) && /\bWHERE\b/i.test(sql),
  },
];

export async function restThroughput(
  instances: readonly Instance[],
  databases: ReadonlyMap<string, DatabaseInfo>,
  options: { connections: number; durationSeconds: number },
): Promise<EndpointThroughput[]> {
  const picked = SHAPES.map(({ shape, matches }) => {
    for (const instance of instances) {
      const db = databases.get(instance.dbId);
      if (!db || !matches(instance.sql)) continue;
      const synthesized = synthesizeFromTemplate(instance, db, 'bench');
      if (synthesized.ok && synthesized.value.spec.parameters.length > 0)
        return { shape, instance, db, endpoint: synthesized.value };
    }
    throw new Error(`no question of shape "${shape}" synthesizes`);
  });
  const executor = createSqlPool({ size: 2 });
  const server = await createRestServer({
    databases: picked.map(({ db, endpoint }) => ({ db, endpoints: [endpoint.spec] })),
    executor,
    timeoutMs: 30_000,
    title: 'bench',
    version: '1',
    // Requests autocannon abandons at the end of a run fail when the pool closes: not news.
    logger: pino({ level: 'silent' }),
  });
  try {
    const results: EndpointThroughput[] = [];
    for (const { shape, instance, endpoint } of picked) {
      const throughput = await measureThroughput(server.url, requestPath(endpoint), options);
      results.push({ shape, instanceId: instance.id, operationId: endpoint.spec.operationId, ...throughput });
    }
    return results;
  } finally {
    await server.close();
    await executor.close();
  }
}

function requestPath({ spec, call }: SynthesizedEndpoint): string {
  const query = new URLSearchParams(Object.entries(call.arguments).map(([name, value]) => [name, String(value)]));
  return `${spec.path}?${query}`;
}
