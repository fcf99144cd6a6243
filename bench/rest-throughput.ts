import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { packageRoot } from '../core/package-root.js';
import { loadSource } from '../pipeline/sources/index.js';
import { runIfMain } from './run-main.js';
import { synthesizeFromTemplate } from '../generators/rest/template.js';
import { describeResponse } from '../generators/rest/response-fields.js';
import type { SynthesizedEndpoint } from '../runtime/rest/spec.js';
import type { DatabaseInfo, Instance } from '../core/model.js';
import { createRestServer } from '../runtime/rest/server.js';
import { measureThroughput, type Throughput } from '../runtime/rest/throughput.js';
import { SERVING_SETUPS } from './serving-setups.js';

/**
 * REST server throughput on loopback for three representative endpoints, synthesized by the
 * template synthesizer from the first source questions of each shape: a simple lookup, a
 * join with an aggregate, an ORDER BY … LIMIT. Served by the real server over each SQL
 * executor of serving-setups.ts (nl2api serve's lanes, and the single pool before them), loaded
 * with autocannon at each number of connections; the server's CPU time (its main thread, its
 * SQL workers and the workers that ended during the run) gives requests per CPU second. Each
 * load runs on a quiet machine and, with `contention`, again with a busy-loop process on each
 * core (issue 33: a wall-clock budget then killed workers all day); the executor's worker
 * recycles are counted per minute.
 */

export type Load = 'quiet' | 'busy';

export interface EndpointThroughput extends Throughput {
  setup: string;
  load: Load;
  connections: number;
  /** Workers the executor killed and replaced during the run, per minute (where it counts them). */
  recyclesPerMinute?: number;
  shape: string;
  instanceId: string;
  operationId: string;
}

const SHAPES: { shape: string; matches: (sql: string) => boolean }[] = [
  { shape: 'simple lookup', matches: (sql) => !/\bJOIN\b|\(|\bORDER\b|\bGROUP\b/i.test(sql) && /\bWHERE\b/i.test(sql) },
  {
    shape: 'join + aggregate',
    matches: (sql) => /\bJOIN\b/i.test(sql) && /\b(COUNT|SUM|AVG)\s*\(/i.test(sql) && !/\bORDER\b/i.test(sql),
  },
  {
    shape: 'ORDER BY … LIMIT',
    matches: (sql) => /\bORDER\s+BY\b[\s\S]*\bLIMIT\b/i.test(sql) && /\bWHERE\b/i.test(sql),
  },
];

export async function restThroughput(
  instances: readonly Instance[],
  databases: ReadonlyMap<string, DatabaseInfo>,
  options: {
    connections: readonly number[];
    durationSeconds: number;
    contention?: boolean;
    setups?: readonly string[];
  },
): Promise<EndpointThroughput[]> {
  const picked = SHAPES.map(({ shape, matches }) => {
    for (const instance of instances) {
      const db = databases.get(instance.dbId);
      if (!db || !matches(instance.sql)) continue;
      const synthesized = synthesizeFromTemplate(instance, db, 'bench');
      if (synthesized.ok && synthesized.value.spec.parameters.length > 0) {
        // Served as generate serves it: its response shaped (here from the SQL alone, no trial run).
        const spec = { ...synthesized.value.spec, response: describeResponse(synthesized.value.spec, db, null) };
        return { shape, instance, db, endpoint: { ...synthesized.value, spec } };
      }
    }
    throw new Error(`no question of shape "${shape}" synthesizes`);
  });
  const results: EndpointThroughput[] = [];
  const setups = SERVING_SETUPS.filter(({ name }) => !options.setups || options.setups.includes(name));
  const loads: Load[] = options.contention ? ['quiet', 'busy'] : ['quiet'];
  for (const setup of setups) {
    const executor = setup.create([...new Set(picked.map(({ db }) => db.path))]);
    const server = await createRestServer({
      databases: picked.map(({ db, endpoint }) => ({ db, endpoints: [endpoint.spec] })),
      executor,
      timeoutMs: 30_000,
      title: 'bench',
      version: '1',
      // Requests autocannon abandons at the end of a run fail when the pool closes: not news.
      logger: pino({ level: 'silent' }),
    });
    try {
      for (const load of loads) {
        const hogs = load === 'busy' ? busyLoops() : [];
        try {
          for (const { shape, instance, endpoint } of picked) {
            const path = requestPath(endpoint);
            // Unmeasured: JIT, lazy validators, statement caches, the lanes' first measure.
            await measureThroughput(server.url, path, { connections: 8, durationSeconds: 1 });
            for (const connections of options.connections) {
              const recyclesBefore = executor.workerRecycles?.();
              const measured = await measureThroughput(server.url, path, {
                connections,
                durationSeconds: options.durationSeconds,
                serverProcesses: () => executor.workerPids(),
              });
              const recycles = recyclesBefore === undefined ? undefined : executor.workerRecycles!() - recyclesBefore;
              results.push({
                setup: setup.name,
                load,
                connections,
                shape,
                instanceId: instance.id,
                operationId: endpoint.spec.operationId,
                ...measured,
                ...(recycles === undefined
                  ? {}
                  : { recyclesPerMinute: Math.round((recycles * 600) / options.durationSeconds) / 10 }),
              });
            }
          }
        } finally {
          await stopAll(hogs);
        }
      }
    } finally {
      await server.close();
      await executor.close();
    }
  }
  return results;
}

/** The table of `restThroughput`'s figures, a line per endpoint, setup and number of connections. */
export function restThroughputLines(results: readonly EndpointThroughput[], durationSeconds: number): string[] {
  return [
    `REST throughput (loopback, ${durationSeconds} s per row; server CPU = its main thread + SQL workers, ended ones included; busy = a busy-loop process per core; the published REST-BIRD server, as once quoted, not measured here: 697 req/s lookup, 491 ORDER BY … LIMIT at 32 connections; measured on this machine as published (uvloop, access log on) it answers 2,747 and 5,025):`,
    ...results.map(
      (r) =>
        `  ${r.shape.padEnd(17)} ${r.setup.padEnd(21)} ${r.load.padEnd(5)} ${String(r.connections).padStart(2)} conn: ${String(r.requestsPerSecond).padStart(5)} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ${r.requestsPerCpuSecond ?? '?'} req per server CPU-s (${r.serverCpuSeconds ?? '?'} s), ${r.recyclesPerMinute ?? '?'} recycles/min, ${r.errors} errors (q${r.instanceId}, ${r.operationId})`,
    ),
  ];
}

function requestPath({ spec, call }: SynthesizedEndpoint): string {
  const query = new URLSearchParams(Object.entries(call.arguments).map(([name, value]) => [name, String(value)]));
  return `${spec.path}?${query}`;
}

/**
 * A busy-loop process per core, the contention a shared machine brings. Each stops by itself
 * after ten minutes should this process die without stopping it.
 */
function busyLoops(): ChildProcess[] {
  const loop = 'const end = Date.now() + 600000; while (Date.now() < end) {}';
  return Array.from({ length: os.availableParallelism() }, () =>
    spawn(process.execPath, ['-e', loop], { stdio: 'ignore' }),
  );
}

function stopAll(children: readonly ChildProcess[]): Promise<unknown> {
  return Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/**
 * `node dist/bench/rest-throughput.js [bird dir] [--contention] [--seconds N] [--setup laned]`:
 * this part of `npm run bench` alone.
 */
runIfMain(import.meta.url, 'rest-throughput', async () => {
  const args = process.argv.slice(2);
  const valueOf = (flag: string) => {
    const at = args.indexOf(flag);
    return at < 0 ? undefined : args.splice(at, 2)[1];
  };
  const seconds = Number(valueOf('--seconds') ?? 3);
  const setup = valueOf('--setup');
  const contention = args.includes('--contention');
  const birdDir = path.resolve(packageRoot(), args.find((arg) => !arg.startsWith('--')) ?? '../shared/bird-dev');
  const source = await loadSource(birdDir);
  const results = await restThroughput(source.instances, new Map(source.databases.map((db) => [db.dbId, db])), {
    connections: [8, 32],
    durationSeconds: seconds,
    contention,
    setups: setup ? [setup] : undefined,
  });
  process.stdout.write(`${restThroughputLines(results, seconds).join('\n')}\n`);
});
