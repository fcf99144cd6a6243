import type { DatabaseInfo, ResultSet, SqlValue } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { runEndpoint } from '../../runtime/rest/endpoint.js';
import { bindPlaceholders, BindError } from '../../runtime/rest/bind.js';
import { InvalidParameterError } from '../../runtime/rest/parameters.js';
import type { ArgumentValue, EndpointSpec } from '../../runtime/rest/spec.js';
import { SqlExecutionError, SqlTimeoutError, type SqlExecutor } from '../../runtime/sql/executor.js';
import { resultShape } from '../../runtime/sql/result-shape.js';
import { sortedRows } from '../../runtime/sql/row-sort.js';
import { composeChain, type ChainLink, type ComposedStatement } from './compose.js';
import { transformOf } from './transforms.js';

/**
 * A chain run both ways on one database state (the database, or one of its variants): hop by
 * hop, as an agent runs it (each endpoint as the server runs it, the previous response's field
 * made into the next argument in JavaScript), and as its composed statement (compose.ts).
 * Verification (verify.ts) holds the two equal on every state.
 */

export interface ChainHopPlan {
  endpoint: EndpointSpec;
  /** Hop 1: every argument; later hops: the ones not bridged (usually none). */
  args: Readonly<Record<string, ArgumentValue>>;
  link?: ChainLink;
}

export interface HopByHop {
  /** Each hop's response rows (in the order the server answers them). */
  responses: ResultSet[];
  /** The value each link carried, hop 2 onwards. */
  bridges: SqlValue[];
  /** The last hop's rows. */
  answer: SqlValue[][];
}

/** One endpoint call on one database state, as the server runs it. */
export type EndpointCall = (
  endpoint: EndpointSpec,
  args: Readonly<Record<string, ArgumentValue>>,
) => Promise<ResultSet>;

/**
 * Calls on one state, each distinct call run once: the chains tried from one first hop call
 * it, and their second hops, again and again.
 */
export function endpointCaller(db: DatabaseInfo, executor: SqlExecutor, timeoutMs: number): EndpointCall {
  const calls = new Map<string, Promise<ResultSet>>();
  return (endpoint, args) => {
    const key = `${endpoint.operationId}\u0000${JSON.stringify(args)}`;
    let call = calls.get(key);
    if (!call) calls.set(key, (call = runEndpoint(endpoint, args, db, executor, timeoutMs)));
    return call;
  };
}

/** `choosing`: the run the chain is made from (the database's): each link's transform must be the one for its values' count. */
export async function runHopByHop(
  hops: readonly ChainHopPlan[],
  call: EndpointCall,
  choosing = false,
): Promise<Outcome<HopByHop>> {
  const responses: ResultSet[] = [];
  const bridges: SqlValue[] = [];
  for (const [i, hop] of hops.entries()) {
    const args: Record<string, ArgumentValue> = { ...hop.args };
    if (hop.link) {
      const values = responses[i - 1].rows.map((row) => row[hop.link!.fieldIndex]);
      const transform = transformOf(hop.link.transform);
      const value = choosing && values.length < transform.chosenFrom ? undefined : transform.apply(values);
      if (values.every((v) => v === null))
        return reject('bridge_empty', `hop ${i} gave no value for hop ${i + 1}'s ${hop.link.param}`);
      if (value === undefined || value === null)
        return reject(
          'bridge_ambiguous',
          `hop ${i} gave ${values.length} values, of which ${hop.link.transform} makes no single value for hop ${i + 1}'s ${hop.link.param}`,
        );
      args[hop.link.param] = value;
      bridges.push(value);
    }
    try {
      responses.push(await call(hop.endpoint, args));
    } catch (error) {
      if (!isVerdict(error)) throw error;
      return reject(categoryOf(error, 'hop'), `hop ${i + 1} (${hop.endpoint.operationId}): ${error.message}`);
    }
  }
  return accept({ responses, bridges, answer: responses[responses.length - 1].rows });
}

/** The composed statement's rows, in the order the last hop's endpoint answers them. */
export async function runComposed(
  composed: ComposedStatement,
  last: Pick<EndpointSpec, 'sql'>,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<Outcome<SqlValue[][]>> {
  try {
    const bound = bindPlaceholders(composed.sql, { ...composed.args }, composed.parameters);
    const result = await executor.run({ dbPath: db.path, sql: bound.sql, params: bound.params, timeoutMs });
    return accept(resultShape(last.sql).ordered ? result.rows : sortedRows(result.rows));
  } catch (error) {
    if (!isVerdict(error)) throw error;
    return reject(categoryOf(error, 'composed'), error.message);
  }
}

/**
 * What SQLite, the timeout or binding said about the chain's own statements: a verdict about
 * the chain. Anything else (a worker lost, the pool closed, a variant not built) is a fault
 * of the run, never stored as the chain's outcome.
 */
function isVerdict(error: unknown): error is Error {
  return (
    error instanceof SqlExecutionError ||
    error instanceof SqlTimeoutError ||
    error instanceof BindError ||
    error instanceof InvalidParameterError
  );
}

function categoryOf(error: Error, where: 'hop' | 'composed'): string {
  if (error instanceof SqlTimeoutError) return `${where}_timeout`;
  if (error instanceof SqlExecutionError) return `${where}_failed`;
  return `${where}_bad_value`;
}

/** The plan's composed statement (each hop's width is its response's). */
export function composedOf(hops: readonly ChainHopPlan[], widths: readonly number[]): ComposedStatement {
  return composeChain(
    hops.map((hop, i) => ({ endpoint: hop.endpoint, args: hop.args, link: hop.link, width: widths[i] })),
  );
}
