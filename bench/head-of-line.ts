import Database from 'better-sqlite3';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import type { DatabaseInfo } from '../core/model.js';
import { createRestServer } from '../runtime/rest/server.js';
import type { ParameterSpec, ResponseField, ServedEndpointSpec } from '../runtime/rest/spec.js';
import { SERVING_SETUPS, type ServingSetup } from './serving-setups.js';

/**
 * Head-of-line blocking (issue 14): on a database large enough for an expensive endpoint
 * (a full scan of 1.2 million rows, ≥ 100 ms), `clients` clients loop on it while one client
 * loops on a primary-key lookup; a third loops on a runaway query (stopped at the time limit)
 * and, the moment its 504 arrives, asks the lookup again: its latency right after a kill.
 * Every setup of serving-setups.ts in turn, in the same run, over the real REST server.
 * Each setup first serves each endpoint once (a server that has run a while knows its costs).
 */

export interface HeadOfLineOptions {
  clients: number;
  seconds: number;
  /** The server's per-query time limit: the runaway query is stopped at it. */
  timeoutMs: number;
}

export interface Latencies {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface HeadOfLineRun {
  setup: string;
  /** The cheap lookup, looping alone while the expensive endpoint is hammered. */
  fast: Latencies;
  /** The expensive endpoint's requests (its clients loop on it). */
  slow: Latencies;
  /** The lookup asked the moment a runaway query's 504 arrived. */
  afterKill: Latencies;
  /** Responses that were neither 200 (nor the runaway's 504): 503s of a full lane, 5xx. */
  failures: number;
}

export interface HeadOfLineFigures {
  rows: number;
  /** The expensive endpoint's statement run once in-process (its cost without any queue). */
  slowQueryMs: number;
  options: HeadOfLineOptions;
  runs: HeadOfLineRun[];
}

const ROWS = 1_200_000;

export async function headOfLine(cacheDir: string, options: HeadOfLineOptions): Promise<HeadOfLineFigures> {
  const db = largeDatabase(cacheDir);
  const runs: HeadOfLineRun[] = [];
  for (const setup of SERVING_SETUPS) runs.push(await runSetup(setup, db, options));
  return { rows: ROWS, slowQueryMs: Math.round(timeOnce(db.path)), options, runs };
}

export function headOfLineLines({ rows, slowQueryMs, options, runs }: HeadOfLineFigures): string[] {
  const show = (l: Latencies) => `p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms (${l.requests} requests)`;
  const laned = runs.find((run) => run.setup === 'laned');
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  return [
    `REST head-of-line (${options.clients} clients on a ${slowQueryMs} ms endpoint over ${rows} rows, one on a lookup, one on a runaway query stopped at ${options.timeoutMs} ms; ${options.seconds} s each):`,
    ...runs.flatMap((run) => [
      `  ${run.setup}: lookup ${show(run.fast)}; right after a kill ${show(run.afterKill)}; expensive endpoint ${show(run.slow)}; ${run.failures} failed`,
    ]),
    ...(laned
      ? [
          `  bars (laned): lookup p99 ≤ 50 ms: ${ok(laned.fast.p99Ms <= 50)}; lookup right after a kill ≤ 100 ms (max): ${ok(laned.afterKill.maxMs <= 100)}`,
        ]
      : []),
  ];
}

async function runSetup(setup: ServingSetup, db: DatabaseInfo, options: HeadOfLineOptions): Promise<HeadOfLineRun> {
  const executor = setup.create([db.path]);
  const server = await createRestServer({
    databases: [{ db, endpoints: [LOOKUP, SCAN, RUNAWAY] }],
    executor,
    timeoutMs: options.timeoutMs,
    title: 'head-of-line bench',
    version: '1',
    logger: pino({ level: 'silent' }),
  });
  const lookup = () => `${server.url}${LOOKUP.path}?id=${1 + Math.floor(Math.random() * ROWS)}`;
  const scan = `${server.url}${SCAN.path}?pattern=%25zz%25`;
  const runaway = `${server.url}${RUNAWAY.path}?n=1000000000000`;
  try {
    await get(lookup());
    await get(scan);
    const end = performance.now() + options.seconds * 1000;
    const fast: number[] = [];
    const slow: number[] = [];
    const afterKill: number[] = [];
    let failures = 0;
    const loop = async (url: () => string, into: number[]) => {
      while (performance.now() < end) {
        const { status, ms } = await get(url());
        if (status === 200) into.push(ms);
        else failures++;
      }
    };
    const killer = async () => {
      while (performance.now() < end) {
        const { status } = await get(runaway);
        if (status !== 504) failures++;
        const { status: next, ms } = await get(lookup());
        if (next === 200) afterKill.push(ms);
        else failures++;
      }
    };
    await Promise.all([
      ...Array.from({ length: options.clients }, () => loop(() => scan, slow)),
      loop(lookup, fast),
      killer(),
    ]);
    return {
      setup: setup.name,
      fast: latencies(fast),
      slow: latencies(slow),
      afterKill: latencies(afterKill),
      failures,
    };
  } finally {
    await server.close();
    await executor.close();
  }
}

async function get(url: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

function latencies(samples: number[]): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]) : 0;
  return { requests: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: Math.round(sorted.at(-1) ?? 0) };
}

/** A table of ROWS rows in the cache directory, built once (a few seconds) and kept. */
function largeDatabase(cacheDir: string): DatabaseInfo {
  mkdirSync(cacheDir, { recursive: true });
  const file = path.join(cacheDir, `head-of-line-${ROWS}.sqlite`);
  if (!existsSync(file)) {
    const partial = `${file}.partial`;
    rmSync(partial, { force: true });
    const db = new Database(partial);
    db.exec(`PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
      CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT NOT NULL);
      INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
        SELECT x, x % 1000, printf('%012x', (x * 2654435761) % 281474976710656) FROM c;`);
    db.close();
    renameSync(partial, file);
  }
  return { dbId: 'big', path: file, fingerprint: 'bench', tables: [] };
}

function timeOnce(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    const statement = db.prepare(SCAN.sql.replace(':pattern', '?'));
    const started = performance.now();
    statement.all('%zz%');
    return performance.now() - started;
  } finally {
    db.close();
  }
}

const param = (name: string, type: ParameterSpec['type']): ParameterSpec => ({
  name,
  type,
  description: `The ${name}.`,
  required: true,
});

const endpoint = (
  operationId: string,
  sql: string,
  parameters: ParameterSpec[],
  field: { name: string; type: ResponseField['types'][number] },
): ServedEndpointSpec => ({
  operationId,
  path: `/v1/bench/big/${operationId}`,
  summary: operationId,
  description: `Bench endpoint ${operationId}.`,
  parameters,
  sql,
  response: {
    description: 'The answer.',
    shape: 'object_or_null',
    fields: [{ name: field.name, description: `The ${field.name}.`, types: [field.type], nullable: false }],
  },
});

/** A primary-key lookup: microseconds of SQL. */
const LOOKUP = endpoint('lookup', 'SELECT v FROM t WHERE id = :id', [param('id', 'integer')], {
  name: 'v',
  type: 'string',
});
/** A full scan (LIKE with a leading wildcard matches no index): the expensive endpoint. */
const SCAN = endpoint('scan', 'SELECT count(*) AS n FROM t WHERE v LIKE :pattern', [param('pattern', 'string')], {
  name: 'n',
  type: 'integer',
});
/** Counts to n: with n = 10^12, only the time limit ends it. */
const RUNAWAY = endpoint(
  'runaway',
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < :n) SELECT count(*) AS n FROM c',
  [param('n', 'integer')],
  { name: 'n', type: 'integer' },
);
