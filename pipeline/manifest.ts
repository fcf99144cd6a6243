import path from 'node:path';
import { type Formulation, orderedFormulations } from '../core/model.js';
import { outputRelevantConfig, type Config } from '../config/schema.js';
import type { EmittedFile } from './emit-artifact.js';
import { hashJson } from '../core/hash.js';
import { packageVersion } from '../core/package-root.js';
import type { ItemSummary } from './samples.js';
import type { LoadedSource } from './sources/index.js';
import type { SourceLicense } from './sources/license.js';
import type { DeterministicStats } from './stats.js';

/**
 * manifest.json: what a run produced and from what. Every field is a function of the inputs
 * and the cached outcomes — no wall-clock time, no absolute path — so that a rerun, or the
 * queue backend, writes it byte for byte again (timing lives in stats.json). The one time it
 * holds is a sample's reference time: the moment gold SQL that reads the clock ran, cached
 * with its answer.
 */

/**
 * The version of the output format (samples, tool specs, served endpoints), bumped when a
 * reader of the old one would misread the new. 2: a REST endpoint answers JSON objects with
 * named fields (one object, one object or null, or a list) instead of `{columns, rows}`, and
 * declares them (`response.shape`, `response.fields`); a REST sample's
 * `output_after_executing_api` is that body.
 */
export const FORMAT_VERSION = 2;

export interface ReferenceTime {
  formulation: Formulation;
  db: string;
  id: string;
  /** ISO 8601: the moment the gold SQL ran, the "now" its answer holds for. */
  referenceTime: string;
}

export interface RunDescription {
  generator: { name: 'nl2api'; version: string };
  formatVersion: number;
  dataset: string;
  layout: LoadedSource['layout'];
  source: {
    /** Relative to the source folder: where the run was made does not matter. */
    questionFile: string;
    sha256: string;
    license: SourceLicense;
  };
  /** The content hash of each database file the samples were verified on, by id. */
  databases: { db: string; fingerprint: string }[];
  /** The LLM and what it did, when REST used one. */
  llm: { provider: string; model: string; roles: string[] } | null;
  /** Accepted samples whose answers depend on the day they were computed. */
  referenceTimes: ReferenceTime[];
  configHash: string;
  config: Record<string, unknown>;
  counts: Partial<Record<Formulation, { input: number; accepted: number; rejected: number }>>;
}

export interface Manifest extends RunDescription {
  /** Every written file but stats.json and this one, with its hash. */
  files: EmittedFile[];
}

/** The license the run's output carries: the config's when set (the user knows best), else the source's own. */
export function outputLicense(source: LoadedSource, config: Config): SourceLicense {
  return config.license ? { ...source.license, id: config.license, from: 'config' } : source.license;
}

export function describeRun(args: {
  source: LoadedSource;
  datasetName: string;
  config: Config;
  items: readonly ItemSummary[];
  stats: DeterministicStats;
}): RunDescription {
  const { source, config, stats } = args;
  const relevant = outputRelevantConfig(config);
  return {
    generator: { name: 'nl2api', version: packageVersion() },
    formatVersion: FORMAT_VERSION,
    dataset: args.datasetName,
    layout: source.layout,
    source: {
      questionFile: path.basename(source.questionFile.path),
      sha256: source.questionFile.sha256,
      license: outputLicense(source, config),
    },
    databases: source.databases
      .map((db) => ({ db: db.dbId, fingerprint: db.fingerprint }))
      .sort((a, b) => (a.db < b.db ? -1 : 1)),
    llm: llmOf(config),
    referenceTimes: referenceTimes(args.items, config.formulations),
    configHash: hashJson(relevant),
    config: relevant,
    counts: Object.fromEntries(
      Object.entries(stats.formulations).map(([f, s]) => [
        f,
        { input: s.total.input, accepted: s.total.accepted, rejected: s.total.rejected },
      ]),
    ),
  };
}

export function manifestOf(run: RunDescription, files: readonly EmittedFile[]): Manifest {
  return { ...run, files: [...files].sort((a, b) => (a.path < b.path ? -1 : 1)) };
}

/** Only REST asks an LLM anything; `roles` as rest-llm-services.ts wires them. */
function llmOf(config: Config): RunDescription['llm'] {
  if (!config.llm || !config.formulations.includes('rest')) return null;
  const roles = [
    ...(config.rest.synthesizer !== 'template' ? ['synthesis'] : []),
    ...(config.rest.judge ? ['judge'] : []),
    ...(config.rest.dedupAgent ? ['dedup'] : []),
  ];
  return { provider: config.llm.provider, model: config.llm.model, roles };
}

function referenceTimes(items: readonly ItemSummary[], formulations: readonly Formulation[]): ReferenceTime[] {
  return orderedFormulations(formulations).flatMap((formulation) =>
    items.flatMap((item) => {
      const result = item.results[formulation];
      const time = result?.ok ? result.gold.referenceTime : undefined;
      return time ? [{ formulation, db: item.instance.dbId, id: item.instance.id, referenceTime: time }] : [];
    }),
  );
}
