import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { UserFacingError } from '../core/errors.js';
import { sha256 } from '../core/hash.js';
import {
  callsRest,
  type Formulation,
  type GoldResult,
  type SelBinding,
  type SqlValue,
  type Ties,
  type ToolCall,
  type ToolPool,
  type ToolSpec,
} from '../core/model.js';
import type { TransformKind } from '../generators/chain/transforms.js';
import { resultShape } from '../runtime/sql/result-shape.js';
import { bindingsFile } from '../pipeline/emit.js';
import { endpointsFile, type ServedEndpoints } from '../pipeline/emit-rest.js';
import { selSampleBindings, type SelRuntimeBindings } from '../pipeline/formulations.js';
import { sqlConstructs, type SqlConstruct } from './sql-constructs.js';

/**
 * A generated output folder (what `nl2api generate` wrote) read as evaluation items: per
 * sample of one formulation, the question, the gold calls and answer, and the tool universe
 * a model is offered (SLOT: the database's tools; SEL: the sample's own tool list; REST and
 * chain: every endpoint of the database, the REST-BIRD task). Only published files are read, so
 * any generated dataset, from this build or an older one, can be evaluated.
 */

export interface EvalItem {
  /** `<formulation>/<db>/<sample id>`: unique in a run. */
  key: string;
  id: string;
  db: string;
  formulation: Formulation;
  question: string;
  evidence: string;
  sql: string;
  difficulty: string | null;
  /** The given starting point (SLOT/SEL): `initialize_active_data` calls, the model starts from their labels. */
  initialization: ToolCall[];
  goldCalls: ToolCall[];
  gold: GoldResult;
  tools: ToolSpec[];
  /** SEL: what each of the sample's tool names stands for. */
  bindings?: Record<string, SelBinding>;
  /** Chain: per gold call (hop), the parameters an earlier hop's response fed it, and how. */
  hops?: ChainHop[];
  constructs: SqlConstruct[];
  /**
   * Content hash of the published sample (its line's text, as generate wrote it): part of
   * every result's key.
   */
  hash: string;
  /** The published sample line as read (what an export carries on). */
  published: Readonly<Record<string, unknown>>;
}

/** A chain hop's bridge: `binds` maps a parameter to the field it came from (`"$HOP<k>.<field>$"`). */
export interface ChainHop {
  binds: Record<string, string>;
  transform: TransformKind | null;
}

export interface EvalDataset {
  dir: string;
  datasetName: string;
  formulation: Formulation;
  /** The config the dataset was generated with, as its manifest records it. */
  pool: ToolPool;
  referenceTime: string | undefined;
  /** Per database: its fingerprint when generated, its tools (all of them), and (REST) the endpoints served. */
  databases: Map<string, { fingerprint: string; tools: ToolSpec[]; endpoints?: ServedEndpoints['endpoints'] }>;
  items: EvalItem[];
}

export interface LoadOptions {
  formulation: Formulation;
  dbIds?: readonly string[];
  /** At most this many items per database (in sample order). */
  limit?: number;
}

export class DatasetError extends UserFacingError {}

interface Manifest {
  dataset: string;
  databases: { db: string; fingerprint: string }[];
  config: { pool?: ToolPool; referenceTime?: string };
}

export async function loadEvalDataset(dir: string, options: LoadOptions): Promise<EvalDataset> {
  const root = path.resolve(dir);
  const manifest = await readJson<Manifest>(
    path.join(root, 'manifest.json'),
    "the dataset's manifest.json (is it the output folder of nl2api generate?)",
  );
  const { formulation } = options;
  const present = new Set(
    (await readdir(path.join(root, formulation)).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -'.jsonl'.length)),
  );
  if (present.size === 0) throw new DatasetError(`${root} has no ${formulation} samples (${formulation}/<db>.jsonl)`);
  const unknown = options.dbIds?.filter((db) => !present.has(db)) ?? [];
  if (unknown.length > 0)
    throw new DatasetError(
      `no ${formulation} samples for ${unknown.join(', ')} in ${root}; it has ${[...present].sort().join(', ')}`,
    );
  const databases: EvalDataset['databases'] = new Map();
  const items: EvalItem[] = [];
  for (const { db, fingerprint } of manifest.databases) {
    if (!present.has(db) || (options.dbIds && !options.dbIds.includes(db))) continue;
    const samples = await readSamples(path.join(root, formulation, `${db}.jsonl`));
    const chosen = options.limit === undefined ? samples : samples.slice(0, options.limit);
    const universe = await readUniverse(root, formulation, db);
    databases.set(db, {
      fingerprint,
      tools: universe.tools,
      ...(universe.endpoints ? { endpoints: universe.endpoints } : {}),
    });
    for (const sample of chosen) items.push(itemOf(sample, formulation, db, universe));
  }
  return {
    dir: root,
    datasetName: manifest.dataset,
    formulation,
    pool: manifest.config.pool ?? 'extended',
    referenceTime: manifest.config.referenceTime,
    databases,
    items,
  };
}

/** What a sample line holds that evaluation reads (emit.ts, emit-rest.ts write it). */
interface SampleRecord {
  sample_id: string;
  input: string;
  evidence: string;
  query: string;
  difficulty: string | null;
  gold_answer: SqlValue[][];
  acceptable_answers?: SqlValue[][][];
  gold_ties?: Ties;
  initialization_step?: ToolCall[];
  output: (
    | ToolCall
    | {
        name: string;
        arguments: Record<string, unknown>;
        path: string;
        /** Chain: a later hop's bridged parameters (emit-chain.ts). */
        binds?: Record<string, string>;
        transform?: TransformKind;
      }
  )[];
  tools?: string[];
}

interface Universe {
  tools: ToolSpec[];
  byName: Map<string, ToolSpec>;
  selBindings?: SelRuntimeBindings;
  endpoints?: ServedEndpoints['endpoints'];
}

async function readUniverse(root: string, formulation: Formulation, db: string): Promise<Universe> {
  // A chain calls the REST formulation's endpoints: it has no tools of its own.
  const toolsOf = callsRest(formulation) ? 'rest' : formulation;
  const tools = await readJson<ToolSpec[]>(
    path.join(root, 'tools', toolsOf, `${db}.json`),
    `its ${toolsOf} tools of ${db}`,
  );
  const universe: Universe = { tools, byName: new Map(tools.map((t) => [t.function.name, t])) };
  if (formulation === 'sel') {
    universe.selBindings = await readJson<SelRuntimeBindings>(
      path.join(root, ...bindingsFile('sel', db).split('/')),
      `the SEL bindings of ${db} (datasets generated before nl2api eval existed lack them: generate again)`,
    );
  }
  if (callsRest(formulation)) {
    const served = await readJson<ServedEndpoints>(
      path.join(root, ...endpointsFile(db).split('/')),
      `the endpoints of ${db}`,
    );
    universe.endpoints = served.endpoints;
  }
  return universe;
}

/** A sample line as read: its record, and its text's hash. */
interface Sample {
  record: SampleRecord;
  hash: string;
}

function itemOf({ record, hash }: Sample, formulation: Formulation, db: string, universe: Universe): EvalItem {
  // A chain's hops are named as its binds name them (`$HOP<k>.<field>$`).
  const goldCalls = record.output.map((call, i) => ({
    name: call.name,
    arguments: call.arguments,
    label: 'label' in call ? call.label : formulation === 'chain' ? `HOP${i + 1}` : '',
  }));
  const width = record.gold_answer[0]?.length ?? 0;
  const gold: GoldResult = {
    columns: Array.from({ length: width }, (_, i) => `column_${i + 1}`),
    rows: record.gold_answer,
    executedSql: record.query,
    ...resultShape(record.query),
    ...(record.acceptable_answers ? { acceptable: record.acceptable_answers } : {}),
    ...(record.gold_ties ? { ties: record.gold_ties } : {}),
  };
  // Computed when first read (an export does not): a sample's SQL is lexed for it.
  let constructs: SqlConstruct[] | undefined;
  const item: EvalItem = {
    key: `${formulation}/${db}/${record.sample_id}`,
    id: record.sample_id,
    db,
    formulation,
    question: record.input,
    evidence: record.evidence ?? '',
    sql: record.query,
    difficulty: record.difficulty ?? null,
    initialization: record.initialization_step ?? [],
    goldCalls,
    gold,
    tools: universe.tools,
    get constructs() {
      return (constructs ??= sqlConstructs(record.query));
    },
    hash,
    published: record as unknown as Record<string, unknown>,
  };
  if (formulation === 'chain')
    item.hops = record.output.map((call) =>
      'binds' in call && call.binds
        ? { binds: call.binds, transform: call.transform ?? null }
        : { binds: {}, transform: null },
    );
  if (formulation === 'sel' && universe.selBindings) {
    const names = record.tools ?? [];
    item.bindings = selSampleBindings(universe.selBindings, record.sample_id, names);
    item.tools = names.flatMap((name) => universe.byName.get(name) ?? []);
  }
  return item;
}

/**
 * The file's samples, each hashed as its line's text: a line of generate's is one text per
 * content, and hashing it costs a tenth of hashing the record's canonical JSON (a gold answer
 * can be long), once per item and run.
 */
async function readSamples(file: string): Promise<Sample[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return { record: JSON.parse(line) as SampleRecord, hash: sha256(line) };
      } catch {
        throw new DatasetError(`${file}:${i + 1}: not a JSON line`);
      }
    });
}

async function readJson<T>(file: string, what: string): Promise<T> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new DatasetError(`cannot read ${what}: ${file}`);
  });
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new DatasetError(`${file} is not valid JSON`);
  }
}
