import { isServed, type ServedEndpointSpec } from '../runtime/rest/spec.js';
import { FORMAT_VERSION } from './manifest.js';
import { restOpenApi } from '../runtime/rest/openapi.js';
import { restToolSpecs } from '../runtime/rest/tools.js';
import { writeArtifact, type DatabaseEmitInput, type EmittedFile } from './emit-artifact.js';
import { jsonlText, jsonText } from './files.js';
import type { Instance } from '../core/model.js';
import { goldAnswerFields, verificationField } from './emit.js';
import type { AcceptedRestSample } from './samples.js';

/**
 * The REST artifacts of one database: `rest/<db>.jsonl` (one line per verified sample,
 * instance order), the endpoints those samples call as an OpenAPI 3.1 document and as an
 * OpenAI-format tool list, and as specs with their SQL (`rest/endpoints/<db>.json`, what
 * `nl2api serve` serves). Endpoints no verified sample calls are not published; those made for
 * the chains of nested gold SQL (pipeline/chain/nested-chains.ts) are, after REST's.
 */

/** What `nl2api serve` reads: the database's endpoints and the content hash of the database they were verified on. */
export interface ServedEndpoints {
  /** The dataset format (manifest.ts FORMAT_VERSION): a server refuses endpoints of another. */
  formatVersion: number;
  db: string;
  fingerprint: string;
  endpoints: ServedEndpointSpec[];
}

export function endpointsFile(dbId: string): string {
  return `rest/endpoints/${dbId}.json`;
}

export function restSampleRecord(
  datasetName: string,
  instance: Instance,
  sample: AcceptedRestSample,
): Record<string, unknown> {
  const { call } = sample.endpoint;
  return {
    sample_id: instance.id,
    dataset_name: datasetName,
    formulation: 'rest',
    input: instance.question,
    evidence: instance.evidence,
    query: instance.sql,
    ...goldAnswerFields(sample.gold),
    output: [{ name: call.name, arguments: call.arguments, path: call.path }],
    output_after_executing_api: sample.response,
    difficulty: instance.difficulty,
    synthesizer: sample.synthesizer,
    attempts: sample.attempts.length + 1,
    verification: verificationField(sample.verification, sample.gold),
  };
}

/** The endpoints the samples call, each once, in the order first called. */
export function calledEndpoints(samples: readonly AcceptedRestSample[]): ServedEndpointSpec[] {
  const byId = new Map<string, ServedEndpointSpec>();
  for (const { endpoint } of samples) {
    // Verified means its trial run shaped its response (rest.synthesize): one without is a bug.
    if (!isServed(endpoint.spec)) throw new Error(`endpoint ${endpoint.spec.operationId} has no response fields`);
    if (!byId.has(endpoint.spec.operationId)) byId.set(endpoint.spec.operationId, endpoint.spec);
  }
  return [...byId.values()];
}

/** REST's endpoints, then those only chains call (in chain order), each once. */
function withChainEndpoints(
  endpoints: ServedEndpointSpec[],
  chains: readonly { hops: readonly { endpoint: ServedEndpointSpec }[] }[],
): ServedEndpointSpec[] {
  const ids = new Set(endpoints.map((e) => e.operationId));
  const added = chains
    .flatMap((chain) => chain.hops.map((hop) => hop.endpoint))
    .filter((e) => !ids.has(e.operationId) && ids.add(e.operationId));
  return added.length ? [...endpoints, ...added] : endpoints;
}

export async function emitRestDatabase(input: DatabaseEmitInput): Promise<EmittedFile[]> {
  const { db, datasetName, outDir } = input;
  const accepted = input.items.flatMap((item) =>
    item.results.rest?.ok ? [{ instance: item.instance, sample: item.results.rest }] : [],
  );
  const lines = accepted.map(({ instance, sample }) => restSampleRecord(datasetName, instance, sample));
  const endpoints = withChainEndpoints(
    calledEndpoints(accepted.map((a) => a.sample)),
    input.items.flatMap((item) => (item.results.chain?.ok ? item.results.chain.samples : [])),
  );
  const maxStringLength = input.config.rest.maxStringLength;
  const openapi = restOpenApi(endpoints, {
    title: `${datasetName} REST API: ${db.dbId}`,
    version: input.version,
    maxStringLength,
  });
  const served: ServedEndpoints = {
    formatVersion: FORMAT_VERSION,
    db: db.dbId,
    fingerprint: db.fingerprint,
    endpoints,
  };
  return [
    await writeArtifact(outDir, `rest/${db.dbId}.jsonl`, jsonlText(lines)),
    await writeArtifact(outDir, endpointsFile(db.dbId), jsonText(served)),
    await writeArtifact(outDir, `tools/rest/${db.dbId}.json`, jsonText(restToolSpecs(endpoints, maxStringLength))),
    await writeArtifact(outDir, `openapi/rest/${db.dbId}.json`, jsonText(openapi)),
  ];
}
