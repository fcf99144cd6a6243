import { groupBy } from '../../core/group.js';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import { PriorityLimit, type Limit } from '../../core/priority-limit.js';
import type { ItemResult } from '../samples.js';
import type { RestDedupStats, RestRunResult } from './rest.js';
import type { RunResult } from './in-process.js';
import type { ChainRunResult } from './chain.js';
import { metricsOf, type StageMetrics } from './stage-runner.js';

/**
 * A run database by database, in id order: every formulation of one database's instances
 * (SLOT/SEL, then REST), handed to `onDatabase` (emit), then let go. A database is what the
 * outputs are written by, and the unit no stage reaches across (REST dedups and serves per
 * database, SQL results never cross files).
 *
 * Two databases are in flight at once: the next one starts with the one before it and takes
 * the item slots that one leaves idle (PriorityLimit: the earlier database always goes first).
 * A database alone leaves the SQL workers idle wherever it waits on few items: a slow
 * statement and the checks that must follow it, the barrier between its SLOT/SEL and REST
 * runs and between REST's phases. Outputs are still emitted in id order, and what the run
 * holds is two databases' items at a time, whatever the size of the corpus.
 */

/** A database's part of the run, and the item slots it may use (its lane of the run's limit). */
export interface DatabasePart {
  databases: DatabaseInfo[];
  instances: Instance[];
  limit: Limit;
}

export interface DatabaseRunners {
  /** SLOT/SEL of one database's instances, or null when the run has no sequence formulation. */
  sequences: ((part: DatabasePart) => Promise<RunResult>) | null;
  /** REST of one database's instances, or null when the run has no REST. */
  rest: ((part: DatabasePart) => Promise<RestRunResult>) | null;
  /** The chains of one database, made of its REST results (runner/chain.ts), or null when the run has no chain. */
  chains: ((part: DatabasePart, rest: RestRunResult) => Promise<ChainRunResult>) | null;
}

export interface DatabaseRunResult {
  metrics: Map<string, StageMetrics>;
  /** Absent when the run has no REST. */
  dedup?: RestDedupStats;
  aborted: boolean;
}

/** Databases running at once: one emitted next, one filling the slots it leaves idle. */
const DATABASES_IN_FLIGHT = 2;

interface DatabaseRun {
  sequences: RunResult;
  rest: RestRunResult | null;
  chains: ChainRunResult | null;
}

/**
 * `onDatabase(db, items)`: the database's items (instance order), every formulation's result
 * set; `db` is undefined for instances naming a database the source does not have (their
 * results are rejections). Called in database id order, one database at a time.
 * `concurrency`: items in flight over the whole run (config.concurrency).
 */
export async function runByDatabase(
  databases: readonly DatabaseInfo[],
  instances: readonly Instance[],
  runners: DatabaseRunners,
  concurrency: number,
  onDatabase: (db: DatabaseInfo | undefined, items: ItemResult[]) => Promise<void>,
): Promise<DatabaseRunResult> {
  const byId = new Map(databases.map((db) => [db.dbId, db]));
  const instancesOf = groupBy(instances, (instance) => instance.dbId);
  const dbIds = [...new Set([...byId.keys(), ...instancesOf.keys()])].sort();
  const limits = new PriorityLimit(concurrency);
  const parts: DatabasePart[] = dbIds.map((dbId, rank) => {
    const db = byId.get(dbId);
    return { databases: db ? [db] : [], instances: instancesOf.get(dbId) ?? [], limit: limits.lane(rank) };
  });

  const runDatabase = async (part: DatabasePart): Promise<DatabaseRun> => {
    const sequences: RunResult = runners.sequences
      ? await runners.sequences(part)
      : { items: part.instances.map((instance) => ({ instance, results: {} })), metrics: new Map(), aborted: false };
    const rest = runners.rest && !sequences.aborted ? await runners.rest(part) : null;
    const chains = runners.chains && rest && !rest.aborted ? await runners.chains(part, rest) : null;
    return { sequences, rest, chains };
  };

  const metrics = new Map<string, StageMetrics>();
  const dedup: RestDedupStats | undefined = runners.rest ? { byDb: {}, merges: [] } : undefined;
  // The databases started and not yet emitted: an emitted one's items are let go with its entry.
  const inFlight = new Map<number, Promise<DatabaseRun>>();
  let started = 0;
  try {
    for (const [i, part] of parts.entries()) {
      for (; started < Math.min(parts.length, i + DATABASES_IN_FLIGHT); started++) {
        const run = runDatabase(parts[started]);
        // Observed when its turn comes (or by the allSettled below): not an unhandled rejection meanwhile.
        run.catch(() => {});
        inFlight.set(started, run);
      }
      const { sequences, rest, chains } = await inFlight.get(i)!;
      inFlight.delete(i);
      addMetrics(metrics, sequences.metrics);
      if (rest) addMetrics(metrics, rest.metrics);
      if (chains) addMetrics(metrics, chains.metrics);
      if (sequences.aborted || rest?.aborted) {
        // The run was interrupted: the database overlapping this one finishes its items in flight.
        await Promise.allSettled(inFlight.values());
        return { metrics, dedup, aborted: true };
      }
      if (rest) {
        Object.assign(dedup!.byDb, rest.dedup.byDb);
        dedup!.merges.push(...rest.dedup.merges);
        for (const item of sequences.items) item.results.rest = rest.results.get(item.instance);
      }
      if (chains) for (const item of sequences.items) item.results.chain = chains.results.get(item.instance);
      await onDatabase(part.databases[0], sequences.items);
    }
  } catch (error) {
    // Nothing of the run goes on unobserved behind a failure.
    await Promise.allSettled(inFlight.values());
    throw error;
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
