import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { distinctness, sumDistinctness, type Distinctness } from '../generators/rest/distinctness.js';
import type { ServedEndpoints } from '../pipeline/emit-rest.js';

/**
 * The REST bars read off a generated output directory: published endpoints per database
 * (after dedup), parameters per endpoint and per sample (the paper: 1.38 slots per query),
 * operation names over the 64-character limit of tool-calling APIs, and whether a database's
 * endpoints can be told apart.
 */
export interface RestDatasetFigures {
  endpointsByDb: Record<string, number>;
  endpoints: number;
  meanParametersPerEndpoint: number;
  samples: number;
  meanArgumentsPerSample: number;
  operationIdsOver64: number;
  /** Parameters whose description shows values read from their column (`e.g. …`, a range, or the enum). */
  parametersWithValues: number;
  /** Parameters declaring an enum (a categorical column's values). */
  parametersWithEnum: number;
  /** Can a model tell a database's endpoints apart (generators/rest/distinctness.ts; target 0 of each). */
  distinctness: Distinctness;
}

export function restDatasetFigures(outDir: string): RestDatasetFigures {
  const endpointsDir = path.join(outDir, 'rest', 'endpoints');
  const endpointsByDb: Record<string, number> = {};
  let endpoints = 0;
  let parameters = 0;
  let over64 = 0;
  let withValues = 0;
  let withEnum = 0;
  const perDb: Distinctness[] = [];
  for (const file of readdirSync(endpointsDir).sort()) {
    const served = JSON.parse(readFileSync(path.join(endpointsDir, file), 'utf8')) as ServedEndpoints;
    endpointsByDb[served.db] = served.endpoints.length;
    endpoints += served.endpoints.length;
    perDb.push(distinctness(served.endpoints));
    for (const endpoint of served.endpoints) {
      parameters += endpoint.parameters.length;
      if (endpoint.operationId.length > 64) over64++;
      for (const p of endpoint.parameters) {
        if (/; [^;]*(, e\.g\. |, one of |; the column holds )[^;]*$/.test(p.description)) withValues++;
        if (p.enum) withEnum++;
      }
    }
  }
  let samples = 0;
  let args = 0;
  for (const file of readdirSync(path.join(outDir, 'rest')).filter((f) => f.endsWith('.jsonl'))) {
    for (const line of readFileSync(path.join(outDir, 'rest', file), 'utf8')
      .split('\n')
      .filter(Boolean)) {
      const sample = JSON.parse(line) as { output: { arguments: Record<string, unknown> }[] };
      samples++;
      args += Object.keys(sample.output[0].arguments).length;
    }
  }
  return {
    endpointsByDb,
    endpoints,
    meanParametersPerEndpoint: endpoints ? parameters / endpoints : 0,
    samples,
    meanArgumentsPerSample: samples ? args / samples : 0,
    operationIdsOver64: over64,
    parametersWithValues: withValues,
    parametersWithEnum: withEnum,
    distinctness: sumDistinctness(perDb),
  };
}
