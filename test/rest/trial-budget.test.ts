import { templateWriter } from '../../generators/chain/question-writer.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../config/load.js';
import type { DatabaseInfo, GoldResult, Instance } from '../../core/model.js';
import { templateSynthesizer, type Synthesizer } from '../../generators/rest/synthesis.js';
import { runGold } from '../../generators/sql/gold.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { synthesizeStage, trialTimeoutMs } from '../../pipeline/stages/rest-synthesize.js';
import { createSqlPool, type SqlPool } from '../../runtime/sql/pool.js';

/**
 * A proposal's trial run is bounded by what its question costs (issue 14): a model that
 * proposes a runaway query for every question cannot stall rest.synthesize; each trial is
 * stopped at its budget and the question still gets an endpoint (the template fallback).
 */

test('the budget: the factor times the gold query, at least the floor, at most the execute timeout', () => {
  const config = parseConfig({ executeTimeoutMs: 30_000, rest: { trialTimeoutFactor: 20, trialMinMs: 1000 } });
  expect(trialTimeoutMs({ elapsedMs: 2 }, config)).toBe(1000);
  expect(trialTimeoutMs({ elapsedMs: 120 }, config)).toBe(2400);
  expect(trialTimeoutMs({ elapsedMs: 10_000 }, config)).toBe(30_000);
  expect(trialTimeoutMs({}, config)).toBe(30_000); // a gold cached before it was timed
});

describe('a model proposing runaway queries', () => {
  const demo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../seeds/demo');
  let pool: SqlPool;
  let db: DatabaseInfo;
  let instances: Instance[];
  beforeAll(async () => {
    pool = createSqlPool({ size: 2 });
    const source = await loadSource(demo, { dbIds: ['bookstore'] });
    db = source.databases[0];
    instances = source.instances.slice(0, 3);
  });
  afterAll(() => pool.close());

  // The template's endpoint crossed with its table twice (within the tables a proposal may add: scope.ts)
  // and made to work a megabyte per row: a runaway only its trial budget stops. Parameters still used.
  const runawaySql = (sql: string) =>
    `SELECT t.* FROM (${sql}) AS t, book AS b1, book AS b2 WHERE length(hex(zeroblob(1000000 + b1.book_id + b2.book_id))) > 0`;
  const runaway: Synthesizer = {
    name: 'llm:scripted/runaway',
    fingerprint: 'runaway',
    async synthesize(requests, database, datasetName) {
      const proposals = await templateSynthesizer.synthesize(requests, database, datasetName);
      return proposals.map((proposal) =>
        proposal.ok
          ? {
              ...proposal,
              value: {
                ...proposal.value,
                spec: { ...proposal.value.spec, sql: runawaySql(proposal.value.spec.sql) },
              },
            }
          : proposal,
      );
    },
  };

  test('every trial is stopped at its budget, far below the execute timeout, and each question falls back to the template', async () => {
    const config = parseConfig({
      formulations: ['rest'],
      executeTimeoutMs: 120_000,
      rest: { attempts: 2, trialTimeoutFactor: 20, trialMinMs: 300 },
    });
    const items: { instance: Instance; gold: GoldResult }[] = [];
    for (const instance of instances) {
      const gold = await runGold(instance, db, pool, 10_000, config.referenceTime);
      if (!gold.ok) throw new Error(gold.message);
      expect(gold.value.elapsedMs).toBeGreaterThanOrEqual(0);
      items.push({ instance, gold: gold.value });
    }
    const ctx = {
      config,
      db,
      executor: pool,
      datasetName: 'demo',
      services: {
        synthesizer: runaway,
        fallback: templateSynthesizer,
        judge: null,
        dedupAgent: null,
        dedupFingerprint: null,
        chainWriter: templateWriter,
      },
    };
    const started = Date.now();
    const outcomes = await synthesizeStage.runBatch(items, ctx, () => {});
    // 3 questions × 1 runaway trial: at 120 s each that is minutes; at their budgets, seconds (a
    // killed SQL worker's replacement starts slowly under jest's TypeScript loader: hence the margin).
    expect(Date.now() - started).toBeLessThan(45_000);
    for (const outcome of outcomes) {
      if (!outcome.ok) throw new Error(`${outcome.category}: ${outcome.message}`);
      expect(outcome.value.synthesizer).toBe('template');
      // A trial stopped at its budget sends the question to the fallback at once: the model is not asked again.
      expect(outcome.value.attempts.map((a) => a.category)).toEqual(['execution:timeout']);
    }
  });

  test('only a timeout skips the remaining attempts: a wrong answer is fed back and retried', async () => {
    const config = parseConfig({ formulations: ['rest'], rest: { attempts: 2 } });
    // Proposes the template's endpoint returning no rows first, then (with feedback) the template's own.
    const learns: Synthesizer = {
      name: 'llm:scripted/learns',
      fingerprint: 'learns',
      async synthesize(requests, database, datasetName) {
        const proposals = await templateSynthesizer.synthesize(requests, database, datasetName);
        return proposals.map((proposal, k) =>
          proposal.ok && requests[k].previous.length === 0
            ? {
                ...proposal,
                value: {
                  ...proposal.value,
                  spec: { ...proposal.value.spec, sql: `SELECT * FROM (${proposal.value.spec.sql}) WHERE 0` },
                },
              }
            : proposal,
        );
      },
    };
    const items: { instance: Instance; gold: GoldResult }[] = [];
    for (const instance of instances) {
      const gold = await runGold(instance, db, pool, 10_000, config.referenceTime);
      if (!gold.ok) throw new Error(gold.message);
      items.push({ instance, gold: gold.value });
    }
    const services = { synthesizer: learns, fallback: templateSynthesizer, judge: null, dedupAgent: null };
    const ctx = {
      config,
      db,
      executor: pool,
      datasetName: 'demo',
      services: { ...services, dedupFingerprint: null, chainWriter: templateWriter },
    };
    for (const outcome of await synthesizeStage.runBatch(items, ctx, () => {})) {
      if (!outcome.ok) throw new Error(`${outcome.category}: ${outcome.message}`);
      expect(outcome.value.synthesizer).toBe('llm:scripted/learns');
      expect(outcome.value.attempts).toHaveLength(1);
      expect(outcome.value.attempts[0].category).not.toBe('execution:timeout');
    }
  });
});
