import path from 'node:path';
import pLimit from 'p-limit';
import { SqliteLlmCache } from '../generators/llm/sqlite-cache.js';
import { ensureWritableDir } from '../pipeline/setup-error.js';
import { RunStore } from '../pipeline/store/run-store.js';
import { finish, type EvalOptions, type EvalRun } from './eval-run.js';
import { openEvalSession, type EvalSession } from './session.js';
import type { ResultLine } from './summary.js';

export type { EvalOptions, EvalRun };

/**
 * `nl2api eval`: models (or agents) on a generated dataset, on the pipeline's own machinery.
 * In process, attempts run `attemptsInFlight` at a time (session.ts) through the session's StageRunner
 * over a run store and an LLM reply cache under `<report>/.cache` (or `--cache-dir`): a rerun
 * asks nothing it has asked, and an interrupted run also finds the replies it got. With
 * `config.queue` the attempts are spread over queue workers instead (queue-run.ts). A fault
 * of the run (a provider that never answered, a lost SQL worker) leaves its attempt failed
 * and uncached: the next run tries it.
 */

export async function runEval(options: EvalOptions): Promise<EvalRun> {
  const report = path.resolve(options.report);
  ensureWritableDir(report, 'the report folder');
  if (options.config.queue) {
    const { runEvalOnQueue } = await import('./queue-run.js');
    return runEvalOnQueue({ ...options, report });
  }
  const cacheDir = path.resolve(options.cacheDir ?? path.join(report, '.cache'));
  ensureWritableDir(cacheDir, 'the cache folder');
  const store = new RunStore({ dir: cacheDir, read: options.config.cache });
  const replyCache = new SqliteLlmCache(path.join(cacheDir, 'llm-cache.sqlite'));
  let session: EvalSession | undefined;
  try {
    session = await openEvalSession(options, { store, replyCache }, options.extraModels);
    for (const line of session.limits) options.log?.(`requests to ${line}`);
    const runner = session.runner();
    const limit = pLimit(session.attemptsInFlight);
    let done = 0;
    const lines = await Promise.all(
      session.jobs.map((_, i) =>
        limit(async (): Promise<ResultLine | undefined> => {
          if (options.signal?.aborted) return undefined;
          const line = await session!.attempt(i, runner);
          options.onProgress?.(++done, session!.jobs.length);
          return line;
        }),
      ),
    );
    return await finish(session, lines, report);
  } finally {
    await session?.close();
    await store.flush();
    store.close();
    replyCache.close();
  }
}
