import type { DatabaseInfo, GoldResult, Instance } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { SqlExecutionError, SqlTimeoutError, timedRun, type SqlExecutor } from '../../runtime/sql/executor.js';
import { abbreviateSql } from '../../runtime/sql/readonly.js';
import { resolveDoubleQuotedStrings, schemaIdentifiers } from './double-quotes.js';
import { significant, tokenize } from '../../runtime/sql/lexer.js';
import { resultShape } from '../../runtime/sql/result-shape.js';
import { pinClock } from './clock.js';

/**
 * The gold stage: runs an instance's gold SQL read-only, with a timeout, and records what
 * the comparison of later outputs needs (is row order part of the answer? are rows distinct?).
 */
export async function runGold(
  instance: Instance,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
  /** What the clock reads (clock.ts): the run's reference time. */
  referenceTime: string,
): Promise<Outcome<GoldResult>> {
  const keyword = firstKeyword(instance.sql);
  if (keyword !== 'select' && keyword !== 'with') {
    return reject('gold_error', `not a read-only SELECT: ${abbreviateSql(instance.sql)}`);
  }
  const { sql: executedSql, readsClock } = goldStatement(instance, db, referenceTime);
  try {
    // Its running time, not its wait for a SQL worker: what a proposal's trial budget scales with.
    const { result, runMs } = await timedRun(executor, { dbPath: db.path, sql: executedSql, params: [], timeoutMs });
    const elapsedMs = Math.round(runMs * 100) / 100;
    const clock = readsClock ? { referenceTime } : {};
    return accept({ ...result, executedSql, ...resultShape(executedSql), ...clock, elapsedMs });
  } catch (error) {
    if (error instanceof SqlTimeoutError) return reject('gold_timeout', error.message);
    if (error instanceof SqlExecutionError) return reject('gold_error', error.message);
    throw error;
  }
}

/**
 * The statement an instance's gold SQL runs as: BIRD's double-quoted strings resolved against
 * the schema, the clock pinned to the run's reference time. Whatever measures the gold (a
 * benchmark's floor) runs this, not the SQL as written.
 */
export function goldStatement(
  instance: Pick<Instance, 'sql'>,
  db: DatabaseInfo,
  referenceTime: string,
): { sql: string; readsClock: boolean } {
  const resolved = resolveDoubleQuotedStrings(instance.sql, schemaIdentifiers(db, instance.sql));
  const sql = pinClock(resolved, referenceTime);
  return { sql, readsClock: sql !== resolved };
}

/** The first keyword, past comments and opening parentheses. */
function firstKeyword(sql: string): string | undefined {
  return significant(tokenize(sql))
    .find((token) => token.text !== '(')
    ?.text.toLowerCase();
}
