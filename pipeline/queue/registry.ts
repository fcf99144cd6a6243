import type { Redis } from 'ioredis';
import { zeroUsage, type UsageTotals } from '../../generators/llm/usage.js';
import { metricsOf, type StageMetrics } from '../runner/stage-runner.js';
import { splitSpec, STAGE_GROUPS, type DatabaseChunk, type RunHead, type RunSpec, type StageGroup } from './jobs.js';

/**
 * The runs of a queue backend, in Redis next to the queues: each run's spec (what workers
 * read), its record (state, times, outcome), and per stage group the set of job ids done
 * and failed (sets, so a job that runs twice after a crash counts once) — what `status`
 * and `runs` show. Workers add their stage metrics and LLM usage to the run's counters.
 *
 * A generate run's spec is stored split: its head (config, ids, counts) under `spec`, and
 * each database's schema and instances under `db:<dbId>`, so that a worker reads what its
 * jobs name rather than the whole corpus (megabytes at 10,000 questions) and no single
 * reply is that large. Like the spec key before them, the chunks are kept as long as the
 * run's record (nothing expires or deletes a run's keys).
 */

export type RunState = 'running' | 'completed' | 'failed' | 'aborted';

export interface RunRecord {
  runId: string;
  state: RunState;
  dataset: string;
  source: string;
  out: string;
  createdAt: number;
  finishedAt?: number;
  /** Per formulation: accepted / input, once completed. */
  outcome?: Record<string, { input: number; accepted: number; rejected: number }>;
  error?: string;
  scheduler?: string;
}

export interface StageProgress {
  group: StageGroup;
  total: number;
  done: number;
  failed: number;
}

const LLM_COUNTERS: (keyof UsageTotals)[] = [
  'requests',
  'cacheHits',
  'retries',
  'failures',
  'inputTokens',
  'outputTokens',
  'costUsd',
];
const STAGE_COUNTERS: (keyof StageMetrics)[] = ['cacheHits', 'runs', 'retries', 'ms'];

export class RunRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(...parts: string[]): string {
    return [this.prefix, 'runs', ...parts].join(':');
  }

  /** A generate run: its spec stored split (its head, a chunk per database). */
  async createRun(spec: RunSpec, record: Omit<RunRecord, 'state' | 'createdAt'>): Promise<RunRecord> {
    const { head, chunks } = splitSpec(spec);
    return this.create(head, record, chunks);
  }

  /**
   * `spec`: what every worker reads (a generate run's head, an evaluation's own spec);
   * `chunks`: parts read by key (a generate run's databases). The chunks are written first,
   * in one pipeline, so that no worker that finds the spec misses a chunk.
   */
  async create(
    spec: { runId: string },
    record: Omit<RunRecord, 'state' | 'createdAt'>,
    chunks: ReadonlyMap<string, DatabaseChunk> = new Map(),
  ): Promise<RunRecord> {
    const existing = await this.get(spec.runId);
    await this.writeChunks(
      spec.runId,
      chunks,
      existing && (await this.specOf<{ runId: string; dbIds?: string[] }>(spec.runId)),
    );
    if (existing) {
      // Re-attaching to a run (its driver restarted): it is running again.
      const resumed: RunRecord = { ...existing, state: 'running', finishedAt: undefined, error: undefined };
      await this.redis.set(this.key(spec.runId, 'record'), JSON.stringify(resumed));
      await this.redis.set(this.key(spec.runId, 'spec'), JSON.stringify(spec));
      return resumed;
    }
    const created: RunRecord = { ...record, state: 'running', createdAt: Date.now() };
    await this.redis
      .multi()
      .set(this.key(spec.runId, 'spec'), JSON.stringify(spec))
      .set(this.key(spec.runId, 'record'), JSON.stringify(created))
      .zadd(this.key(), created.createdAt, spec.runId)
      .exec();
    return created;
  }

  /** A generate run's head (its spec key). */
  async head(runId: string): Promise<RunHead | undefined> {
    return this.specOf<RunHead>(runId);
  }

  /** One database's chunk of a generate run's spec. */
  async chunk(runId: string, dbId: string): Promise<DatabaseChunk | undefined> {
    const text = await this.redis.get(this.chunkKey(runId, dbId));
    return text ? (JSON.parse(text) as DatabaseChunk) : undefined;
  }

  chunkKey(runId: string, dbId: string): string {
    return this.key(runId, 'db', dbId);
  }

  /** A run's spec as its kind of run wrote it (an evaluation's is its own). */
  async specOf<S extends { runId: string }>(runId: string): Promise<S | undefined> {
    const text = await this.redis.get(this.key(runId, 'spec'));
    return text ? (JSON.parse(text) as S) : undefined;
  }

  /**
   * The chunks, in one pipeline; on re-attaching, the chunks of databases the run no longer
   * has (the driver restarted on another selection) are dropped, so none outlives its run's spec.
   */
  private async writeChunks(
    runId: string,
    chunks: ReadonlyMap<string, DatabaseChunk>,
    previous: { dbIds?: string[] } | undefined,
  ): Promise<void> {
    const stale = (previous?.dbIds ?? []).filter((dbId) => !chunks.has(dbId));
    if (chunks.size === 0 && stale.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [dbId, chunk] of chunks) pipeline.set(this.chunkKey(runId, dbId), JSON.stringify(chunk));
    for (const dbId of stale) pipeline.del(this.chunkKey(runId, dbId));
    const failed = ((await pipeline.exec()) ?? []).find(([error]) => error);
    if (failed) throw failed[0]!;
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const text = await this.redis.get(this.key(runId, 'record'));
    return text ? (JSON.parse(text) as RunRecord) : undefined;
  }

  async finish(runId: string, update: Pick<RunRecord, 'state'> & Partial<RunRecord>): Promise<void> {
    const record = await this.get(runId);
    if (!record) return;
    await this.redis.set(this.key(runId, 'record'), JSON.stringify({ ...record, ...update, finishedAt: Date.now() }));
  }

  /** Newest first. */
  async list(limit = 50): Promise<RunRecord[]> {
    const ids = await this.redis.zrevrange(this.key(), 0, limit - 1);
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records.filter((r): r is RunRecord => r !== undefined);
  }

  /** Jobs a run has (or will have) in a stage group: sets, so planning twice counts once. */
  async plan(runId: string, group: StageGroup, jobIds: readonly string[]): Promise<void> {
    const pipeline = this.redis.pipeline().sadd(this.key(runId, 'groups'), group);
    for (let i = 0; i < jobIds.length; i += 1000)
      pipeline.sadd(this.key(runId, 'planned', group), ...jobIds.slice(i, i + 1000));
    await pipeline.exec();
  }

  async markDone(runId: string, group: StageGroup, jobId: string): Promise<void> {
    await this.redis.sadd(this.key(runId, 'done', group), jobId);
  }

  async markFailed(runId: string, group: StageGroup, jobId: string): Promise<void> {
    await this.redis.sadd(this.key(runId, 'failed', group), jobId);
  }

  async progress(runId: string): Promise<StageProgress[]> {
    const present = new Set(await this.redis.smembers(this.key(runId, 'groups')));
    const groups = STAGE_GROUPS.filter((group) => present.has(group));
    const pipeline = this.redis.pipeline();
    for (const group of groups) {
      pipeline
        .scard(this.key(runId, 'planned', group))
        .scard(this.key(runId, 'done', group))
        .scard(this.key(runId, 'failed', group));
    }
    const counts = ((await pipeline.exec()) ?? []).map(([, n]) => Number(n));
    return groups.map((group, i) => ({
      group,
      total: counts[3 * i],
      done: counts[3 * i + 1],
      failed: counts[3 * i + 2],
    }));
  }

  /** A worker's stage metrics and LLM usage for one job, added to the run's counters. */
  async addMetrics(
    runId: string,
    stages: ReadonlyMap<string, StageMetrics>,
    llm: Record<string, UsageTotals>,
  ): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const [stage, m] of stages)
      for (const c of STAGE_COUNTERS) if (m[c]) pipeline.hincrbyfloat(this.key(runId, 'stages'), `${stage}|${c}`, m[c]);
    for (const [model, totals] of Object.entries(llm))
      for (const c of LLM_COUNTERS)
        if (totals[c]) pipeline.hincrbyfloat(this.key(runId, 'llm'), `${model}|${c}`, totals[c]);
    await pipeline.exec();
  }

  async metrics(runId: string): Promise<{ stages: Map<string, StageMetrics>; llm: Record<string, UsageTotals> }> {
    const [stageFields, llmFields] = await Promise.all([
      this.redis.hgetall(this.key(runId, 'stages')),
      this.redis.hgetall(this.key(runId, 'llm')),
    ]);
    const stages = new Map<string, StageMetrics>();
    for (const [field, value] of Object.entries(stageFields)) {
      const [stage, counter] = field.split('|') as [string, keyof StageMetrics];
      metricsOf(stages, stage)[counter] = Number(value);
    }
    const llm: Record<string, UsageTotals> = {};
    for (const [field, value] of Object.entries(llmFields)) {
      const [model, counter] = field.split('|') as [string, keyof UsageTotals];
      llm[model] ??= zeroUsage();
      llm[model][counter] = Number(value);
    }
    return { stages, llm };
  }
}
