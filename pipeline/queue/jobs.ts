import { randomBytes } from 'node:crypto';
import type { Config } from '../../config/schema.js';
import type { DatabaseInfo, Instance } from '../../core/model.js';

/**
 * The queue topology of a run (one BullMQ queue per stage group) and the typed payload of
 * each job. Payloads carry indices, never data: the run's spec (config, databases,
 * instances) is stored once in Redis (registry.ts) and every worker reads it from there.
 *
 *   db barrier (emit gate, per database)
 *    ├─ item: gold → parse → slot.decompose → sel.expand → execute → verify   (per instance)
 *    └─ rest.dedup (per database; then adds its rest.verify children and waits for them)
 *        └─ rest.synthesize (per synthesis batch)
 *
 * Job ids are derived from the run id and the unit of work, so re-adding a run (a driver
 * restarted with `--run <id>`) adds nothing twice.
 */

/** Key prefix of the queues, the store, the LLM cache and the run registry, unless told otherwise. */
export const DEFAULT_PREFIX = 'nl2api';

export const STAGE_QUEUES = {
  item: 'item',
  'rest.synthesize': 'rest-synthesize',
  'rest.dedup': 'rest-dedup',
  'rest.verify': 'rest-verify',
  emit: 'db-barrier',
  run: 'run',
} as const;
export type StageGroup = keyof typeof STAGE_QUEUES;
export const STAGE_GROUPS = Object.keys(STAGE_QUEUES) as StageGroup[];

/** The SLOT/SEL flow of one instance. */
export interface ItemJob {
  runId: string;
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

/** The final check of one instance against the endpoints of dedup `dedupKey`. */
export interface VerifyJob {
  runId: string;
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

/** Failures of a barrier's subtree, by job id, as the barrier returns them. */
export interface BarrierResult {
  failures: Record<string, string>;
}

/** What every worker needs to know about a run. */
export interface RunSpec {
  runId: string;
  config: Config;
  datasetName: string;
  databases: DatabaseInfo[];
  instances: Instance[];
  /** The code fingerprint of the driver: a worker of another build would compute other keys. */
  code: string;
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
