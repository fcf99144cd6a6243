import type { Instance } from '../core/model.js';
import type { ChainSample } from './chain/sample.js';
import { writeArtifact, type DatabaseEmitInput, type EmittedFile } from './emit-artifact.js';
import { jsonlText } from './files.js';

/**
 * The chain samples of one database: `chain/<db>.jsonl`, one line per chain, in the order of
 * their first hops' instances. A chain calls the REST formulation's endpoints of the same run
 * (`rest/endpoints/<db>.json` serves them): it has no tools of its own.
 */

export function chainSampleRecord(
  datasetName: string,
  instance: Instance,
  sample: ChainSample,
): Record<string, unknown> {
  const { verified } = sample;
  return {
    sample_id: sample.id,
    dataset_name: datasetName,
    formulation: 'chain',
    input: sample.question,
    evidence: sample.evidence,
    component_questions: sample.components,
    origin: sample.origin,
    question_writer: sample.writer,
    hops: sample.hops.length,
    // Each call with the arguments it was made with; a later hop's bridged argument also says where it came from.
    output: sample.hops.map((hop, i) => ({
      name: hop.endpoint.operationId,
      path: hop.endpoint.path,
      arguments: hop.link ? { ...hop.args, [hop.link.param]: sample.bridges[i - 1] } : hop.args,
      ...(hop.link
        ? { binds: { [hop.link.param]: `$HOP${i}.${hop.link.field}$` }, transform: hop.link.transform }
        : {}),
    })),
    output_after_executing_api: sample.responses,
    gold_answer: verified.run.answer,
    query: verified.composed.sql,
    query_arguments: verified.composed.args,
    first_hop: { sample_id: sample.firstId, question: instance.question, query: instance.sql },
    difficulty: instance.difficulty,
    verification: {
      composed: { ok: true, category: verified.agreement.category, message: verified.agreement.message },
      variants: verified.variants.map((v) =>
        'open' in v
          ? { variant: v.variant, open: true }
          : { variant: v.variant, ok: true, ...(v.proven ? { proven: true } : {}) },
      ),
    },
  };
}

export async function emitChainDatabase(input: DatabaseEmitInput): Promise<EmittedFile[]> {
  const { db, datasetName, outDir } = input;
  const lines = input.items.flatMap((item) =>
    item.results.chain?.ok
      ? item.results.chain.samples.map((sample) => chainSampleRecord(datasetName, item.instance, sample))
      : [],
  );
  return [await writeArtifact(outDir, `chain/${db.dbId}.jsonl`, jsonlText(lines))];
}
