import { groupBy } from '../../core/group.js';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import type { ItemResult } from '../samples.js';
import type { RestDedupStats, RestRunOptions, RestRunResult } from './rest.js';
import type { InProcessRunOptions, RunResult } from './in-process.js';
import { metricsOf, type StageMetrics } from './stage-runner.js';

/**
 * A run database by database, in id order: every formulation of one database's instances
 * (SLOT/SEL, then REST), handed to `onDatabase` (emit), then let go. What the run holds is
 * one database's items at a time, whatever the size of the corpus: a database is what the
 * outputs are written by, and the unit no stage reaches across (REST dedups and serves per
 * database, SQL results never cross files).
 */

export interface DatabaseRunners {
  /** SLOT/SEL of one database's instances, or null when the run has no sequence formulation. */
  sequences: ((options: Pick<InProcessRunOptions, 'databases' | 'instances'>) => Promise<RunResult>) | null;
  /** REST of one database's instances, or null when the run has no REST. */
  rest: ((options: Pick<RestRunOptions, 'databases' | 'instances'>) => Promise<RestRunResult>) | null;
}

export interface DatabaseRunResult {
  metrics: Map<string, StageMetrics>;
  /** Absent when the run has no REST. */
  dedup?: RestDedupStats;
  aborted: boolean;
}

/**
 * `onDatabase(db, items)`: the database's items (instance order), every formulation's result
 * set; `db` is undefined for instances naming a database the source does not have (their
 * results are rejections). Called in database id order, one database at a time.
 */
export async function runByDatabase(
  databases: readonly DatabaseInfo[],
  instances: readonly Instance[],
  runners: DatabaseRunners,
  onDatabase: (db: DatabaseInfo | undefined, items: ItemResult[]) => Promise<void>,
): Promise<DatabaseRunResult> {
  const byId = new Map(databases.map((db) => [db.dbId, db]));
  const instancesOf = groupBy(instances, (instance) => instance.dbId);
  const dbIds = [...new Set([...byId.keys(), ...instancesOf.keys()])].sort();
  const metrics = new Map<string, StageMetrics>();
  const dedup: RestDedupStats | undefined = runners.rest ? { byDb: {}, merges: [] } : undefined;
  for (const dbId of dbIds) {
    const db = byId.get(dbId);
    const part = { databases: db ? [db] : [], instances: instancesOf.get(dbId) ?? [] };
    const sequences: RunResult = runners.sequences
      ? await runners.sequences(part)
      : { items: part.instances.map((instance) => ({ instance, results: {} })), metrics: new Map(), aborted: false };
    addMetrics(metrics, sequences.metrics);
    if (sequences.aborted) return { metrics, dedup, aborted: true };
    const rest = runners.rest ? await runners.rest(part) : null;
    if (rest) {
      addMetrics(metrics, rest.metrics);
      if (rest.aborted) return { metrics, dedup, aborted: true };
      Object.assign(dedup!.byDb, rest.dedup.byDb);
      dedup!.merges.push(...rest.dedup.merges);
      for (const item of sequences.items) item.results.rest = rest.results.get(item.instance);
    }
    await onDatabase(db, sequences.items);
  }
  return { metrics, dedup, aborted: false };
}

/** Per stage, the sum of several runners' metrics. */
export function addMetrics(sum: Map<string, StageMetrics>, metrics: ReadonlyMap<string, StageMetrics>): void {
  for (const [stage, m] of metrics) {
    const total = metricsOf(sum, stage);
    total.cacheHits += m.cacheHits;
    total.runs += m.runs;
    total.retries += m.retries;
    total.ms += m.ms;
  }
}
