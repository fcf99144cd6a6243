import { randomBytes } from 'node:crypto';
import type { Config } from '../../config/schema.js';
import { REST_BASED, type DatabaseInfo, type Instance } from '../../core/model.js';
import { PIPELINE_GRAPH } from '../graph.js';

/**
 * The queue topology of a run, from the pipeline graph (graph.ts), and the typed payload of
 * each job. A job group is a unit a worker runs on its own, one BullMQ queue each:
 *
 *   emit (per database: the gate before emit, where chain.compose runs; its children are the database's jobs)
 *    ├─ item: the sequence formulations' stages, gold → … → verify   (per instance)
 *    └─ rest.dedup (the graph's REST-only barrier; adds its rest.verify children, waits for them)
 *        └─ rest.synthesize (the graph's REST-only batch stage: per synthesis batch)
 *   rest.verify: REST's path stages, execute and verify (one stage object), per instance
 *   run: a whole scheduled run (the nightly scheduler's)
 *   eval: one attempt of an evaluation (nl2api eval --queue; its processor is the evaluation's)
 *
 * Payloads carry ids and indices, never data: the run's spec is stored once in Redis
 * (registry.ts), its run-level part in one small key and each database's schema and
 * instances in a chunk of their own, so a job names its database and a worker reads only
 * the chunks of the databases it works on (run-contexts.ts). Job ids are
 * derived from the run id and the unit of work, so re-adding a run (a driver restarted with
 * `--run <id>`) adds nothing twice.
 */

/** Key prefix of the queues, the store, the LLM cache and the run registry, unless told otherwise. */
export const DEFAULT_PREFIX = 'nl2api';

type GraphStage = (typeof PIPELINE_GRAPH)[number];
/**
 * The stages only REST goes through (its samples, and the chains made of them): each waits for
 * others (a batch, a barrier), so each is a job of its own. chain.compose, which waits for all
 * of a database's REST results, runs in that database's emit gate (stage-processors.ts); the
 * driver, assembling the run, finds its outcome in the store.
 */
type RestOnlyStage = Extract<GraphStage, { serves: typeof REST_BASED }>['name'];
const REST_ONLY_STAGES = PIPELINE_GRAPH.flatMap((stage) =>
  stage.serves === REST_BASED ? [stage.name as RestOnlyStage] : [],
);
/** REST's path stages, labelled as in progress and metrics (progress.ts, restLabel). */
const REST_CALL = 'rest.verify' satisfies `rest.${Extract<GraphStage, { kind: 'path' }>['name']}`;

export type StageGroup = 'item' | RestOnlyStage | typeof REST_CALL | 'emit' | 'run' | 'eval';
export const STAGE_GROUPS: readonly StageGroup[] = ['item', ...REST_ONLY_STAGES, REST_CALL, 'emit', 'run', 'eval'];
/** Each group's queue name (the emit gate's is the per-database barrier's). */
export const STAGE_QUEUES = Object.fromEntries(
  STAGE_GROUPS.map((group) => [group, group === 'emit' ? 'db-barrier' : group.replace('.', '-')]),
) as Record<StageGroup, string>;

/** The SLOT/SEL flow of one instance (of database `db`: the chunk its instance is in). */
export interface ItemJob {
  runId: string;
  db: string;
  index: number;
}

/** One synthesis batch of one database. */
export interface SynthesisJob {
  runId: string;
  db: string;
  indices: number[];
}

/** A database's dedup; `step` moves on once its verify children are added. */
export interface DedupJob {
  runId: string;
  db: string;
  step?: 'dedup' | 'await-verify';
}

/** The final check of one instance (of database `db`) against the endpoints of dedup `dedupKey`. */
export interface VerifyJob {
  runId: string;
  db: string;
  index: number;
  dedupKey: string;
}

/** The per-database gate before emit. */
export interface BarrierJob {
  runId: string;
  db: string;
}

/** A whole run to drive (what the nightly scheduler enqueues). */
export interface RunJob {
  /** Config as given (validated again by the driving worker). */
  config: unknown;
  /** Base directory of versioned outputs. */
  base: string;
  scheduler?: string;
}

/** One attempt of an evaluation run: its index in the run's list of attempts (eval/queue-run.ts). */
export interface EvalJob {
  runId: string;
  index: number;
}

/** Failures of a barrier's subtree, by job id, as the barrier returns them. */
export interface BarrierResult {
  failures: Record<string, string>;
}

/** What workers need to know about a run, as the driver has it; stored split (RunHead, DatabaseChunk). */
export interface RunSpec {
  runId: string;
  config: Config;
  datasetName: string;
  databases: DatabaseInfo[];
  instances: Instance[];
  /** The code fingerprint of the driver: a worker of another build would compute other keys. */
  code: string;
}

/** The run-level part of a spec, one small key: what every job of the run reads. */
export interface RunHead {
  runId: string;
  config: Config;
  datasetName: string;
  code: string;
  /** The run's databases, sorted; each has a chunk of its own. */
  dbIds: string[];
  /** Instances per database: the run's size at a glance, without reading a chunk. */
  instanceCounts: Record<string, number>;
}

/** One database's part of a spec, in a key of its own: what the jobs on that database read. */
export interface DatabaseChunk {
  database: DatabaseInfo;
  /** The database's instances, in source order. */
  instances: Instance[];
}

/** A spec split for storage: the head, and a chunk per database (instances of no database in it are no job's). */
export function splitSpec(spec: RunSpec): { head: RunHead; chunks: Map<string, DatabaseChunk> } {
  const databases = [...spec.databases].sort((a, b) => (a.dbId < b.dbId ? -1 : a.dbId > b.dbId ? 1 : 0));
  const chunks = new Map<string, DatabaseChunk>(
    databases.map((database) => [database.dbId, { database, instances: [] }]),
  );
  for (const instance of spec.instances) chunks.get(instance.dbId)?.instances.push(instance);
  const { runId, config, datasetName, code } = spec;
  const instanceCounts = Object.fromEntries([...chunks].map(([dbId, chunk]) => [dbId, chunk.instances.length]));
  return { head: { runId, config, datasetName, code, dbIds: [...chunks.keys()], instanceCounts }, chunks };
}

export const jobId = (runId: string, ...parts: (string | number)[]): string => [runId, ...parts].join('.');

export function newRunId(now = new Date()): string {
  return `r${now.toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

/**
 * Where a run's stage outcomes live in Redis: the shared store, or, for a run with the cache
 * off (`--no-cache`), a store of its own, so it reads nothing older but its workers still
 * share everything it computes.
 */
export function storePrefix(prefix: string, run: { runId: string; cache: boolean }): string {
  return run.cache ? prefix : `${prefix}:fresh:${run.runId}`;
}
