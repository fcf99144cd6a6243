import type { DatabaseInfo, ToolCall, ToolOutput, ToolPool } from '../core/model.js';
import { callOverHttp } from '../pipeline/stages/rest-execute.js';
import { argumentTypeProblem } from '../runtime/rest/parameters.js';
import type { ArgumentValue, ParameterSpec } from '../runtime/rest/spec.js';
import { executeSequence, ToolSession, type OutputPage } from '../runtime/slot/execute.js';
import { executeSelSequence, SelToolSession } from '../runtime/sel/execute.js';
import { ToolError } from '../runtime/slot/errors.js';
import { SqlExecutionError, SqlTimeoutError, type SqlExecutor } from '../runtime/sql/executor.js';
import type { RestResponse } from '../verifiers/rest.js';
import { unconsumedLabels } from './answer-labels.js';
import { resolveReferences } from './chain-references.js';
import type { EvalItem } from './dataset.js';

/**
 * The live tools of one item, as a model meets them: an episode takes calls one at a time and
 * answers each with the tool's output or an error worded for the model (SLOT and SEL run on
 * nl2api's own runtime, REST and chain over HTTP against the served endpoints). An error caused by the
 * call is an observation; a fault of our machinery (a lost SQL worker, a server gone) is
 * thrown, so the item is not scored on it.
 */

export type StepResult = (
  | { ok: true; output: ToolOutput | RestResponse }
  | {
      ok: false;
      error: string;
      /** `tool:<code>`, `sql_error`, `sql_timeout`, `http_<status>`, `format`. */ kind: string;
    }
) & {
  /** Chain: the call as it was sent, its references to earlier responses resolved (chain-references.ts). */
  sent?: ToolCall;
};

export interface Episode {
  call(call: ToolCall): Promise<StepResult>;
  /**
   * A sequence's answer as the dataset's verification computed it: the calls compiled into one
   * statement and the outputs of `labels` (rows tied on a sort key come out in the order the
   * gold's verification saw). REST has no such step: its answer is a response.
   */
  answer?(calls: readonly ToolCall[], labels: readonly string[]): Promise<ToolOutput[]>;
  /**
   * The first `maxRows` rows of an output defined earlier, a starting table's included (a
   * sequence's: what the export's negatives read every starting column from at once). REST
   * has no such step: its outputs are responses.
   */
  rows?(label: string, maxRows: number): Promise<StepResult>;
  /**
   * Direct invocation: the calls in order, up to the first that fails, and, when none fails
   * and the formulation has one, the answer (the unconsumed outputs, computed as `answer`).
   */
  runAll(calls: readonly ToolCall[]): Promise<{ results: StepResult[]; answer?: ToolOutput[] }>;
}

export interface EnvironmentOptions {
  executor: SqlExecutor;
  databases: ReadonlyMap<string, DatabaseInfo>;
  pool: ToolPool;
  timeoutMs: number;
  /** REST: the served endpoints' base URL. */
  restUrl?: string;
  /** REST: each operationId's endpoint, per database. */
  restEndpoints?: ReadonlyMap<string, ReadonlyMap<string, ServedPath>>;
}

/** Where an endpoint is served, and the parameters its calls are checked against before a request. */
export interface ServedPath {
  path: string;
  parameters: readonly ParameterSpec[];
}

/** Rows of a tool's output a model is shown (and the trace keeps); one more tells that there are more. */
export const OBSERVED_ROWS = 20;
/**
 * A call's output is only observed, never the answer (answers run as compiled sequences):
 * its query stops after the rows shown, instead of carrying a whole intermediate table back.
 */
const PREVIEW = { maxRows: OBSERVED_ROWS + 1 };

export async function openEpisode(item: EvalItem, options: EnvironmentOptions): Promise<Episode> {
  if (item.formulation === 'rest') return restEpisode(item.db, options);
  if (item.formulation === 'chain') return chainEpisode(item.db, options);
  const db = options.databases.get(item.db);
  if (!db) throw new Error(`database ${item.db} is not open`);
  const runOptions = { timeoutMs: options.timeoutMs, pool: options.pool };
  const sequenceOf = (calls: readonly ToolCall[], labels: readonly string[]) => ({
    initialization: item.initialization,
    calls: [...calls],
    answerLabels: [...labels],
  });
  const session =
    item.formulation === 'sel'
      ? new SelToolSession(db, options.executor, runOptions, item.bindings ?? {})
      : new ToolSession(db, options.executor, runOptions);
  // The starting tables are given: a failure there is the dataset's, not the model's.
  for (const call of item.initialization) await session.define(call);
  const answer = (calls: readonly ToolCall[], labels: readonly string[]) =>
    item.formulation === 'sel'
      ? executeSelSequence(
          { ...sequenceOf(calls, labels), bindings: item.bindings ?? {}, derivedKeys: [] },
          db,
          options.executor,
          runOptions,
        )
      : executeSequence(sequenceOf(calls, labels), db, options.executor, runOptions);
  return {
    call: (call) => asStep(() => session.call(call, PREVIEW)),
    answer,
    rows: (label, maxRows) => asStep(() => session.output(label, { maxRows })),
    runAll: async (calls) => {
      // Compile first: a call the tools refuse is found without running anything. Compiled as
      // a sequence's calls (no starting table among them), so the session holds the very
      // sequence `answer` would compile, and answers from it.
      for (const [i, call] of calls.entries()) {
        const defined = await asStep(async () => {
          await session.define(call, false);
          return { kind: 'scalar', value: null };
        });
        if (!defined.ok) {
          const earlier = await previews(calls.slice(0, i));
          return { results: [...earlier, defined] };
        }
      }
      // Then the answer once: the unconsumed outputs are its parts, the other outputs are previewed.
      const sinks = unconsumedLabels(calls);
      let outputs: ToolOutput[];
      try {
        outputs = await session.answer(sinks);
      } catch (error) {
        if (!(error instanceof SqlExecutionError || error instanceof SqlTimeoutError)) throw error;
        return { results: await previews(calls, true) }; // which call fails, and how
      }
      const results: StepResult[] = [];
      for (const call of calls) {
        const sink = sinks.indexOf(call.label);
        results.push(
          sink >= 0 ? { ok: true, output: outputs[sink] } : await asStep(() => session.output(call.label, PREVIEW)),
        );
        if (!results[results.length - 1].ok) return { results };
      }
      return { results, answer: outputs };
    },
  };

  /** Each call's output preview, in order, up to the first failure (`stop`). */
  async function previews(calls: readonly ToolCall[], stop = false): Promise<StepResult[]> {
    const results: StepResult[] = [];
    for (const call of calls) {
      results.push(await asStep(() => session.output(call.label, PREVIEW)));
      if (stop && !results[results.length - 1].ok) break;
    }
    return results;
  }
}

/**
 * A formulation's tools for one database, live and bound to no item: a session in which each
 * call's output is kept under its label for later calls (`"$LABEL$"`), the starting table
 * included (`initialize_active_data` is a call like the others). What an MCP client calls
 * (mcp/). A call answers its output whole, or its first `maxRows` rows and one more (so that a
 * caller can say there are more); SLOT and SEL outputs are then read on by label (`outputs`).
 */
export interface LiveToolSession {
  call(call: ToolCall): Promise<StepResult>;
  /** SLOT/SEL: the session's labelled outputs (REST has none: a response is not kept). */
  outputs?: LabelledOutputs;
}

/** The outputs of a session's calls, by label; an unknown label is a ToolError (`bad_reference`). */
export interface LabelledOutputs {
  /** The labels so far, starting tables included, in call order. */
  labels(): string[];
  /** Rows (a list: values) of an output; a scalar is one. A `count(*)` of the call's query. */
  size(label: string): Promise<number>;
  /** A page of an output: `page.maxRows` rows from `page.offset` (a scalar: whole). */
  read(label: string, page: OutputPage): Promise<ToolOutput>;
}

export function openToolSession(
  formulation: EvalItem['formulation'],
  dbId: string,
  options: EnvironmentOptions,
  bindings: EvalItem['bindings'],
  maxRows: number,
): LiveToolSession {
  if (formulation === 'rest') return restEpisode(dbId, options);
  if (formulation === 'chain') return chainEpisode(dbId, options);
  const db = options.databases.get(dbId);
  if (!db) throw new Error(`database ${dbId} is not open`);
  const runOptions = { timeoutMs: options.timeoutMs, pool: options.pool };
  const session =
    formulation === 'sel'
      ? new SelToolSession(db, options.executor, runOptions, bindings ?? {})
      : new ToolSession(db, options.executor, runOptions);
  return {
    call: (call) => asStep(() => session.call(call, { maxRows: maxRows + 1 })),
    outputs: {
      labels: () => session.labels(),
      size: (label) => session.size(label),
      read: (label, page) => session.output(label, page),
    },
  };
}

/** A call's output, or its error as the model is told it (faults of ours are thrown). */
export async function asStep(run: () => Promise<ToolOutput>): Promise<StepResult> {
  try {
    return { ok: true, output: await run() };
  } catch (error) {
    if (error instanceof ToolError) return { ok: false, kind: `tool:${error.code}`, error: error.message };
    if (error instanceof SqlTimeoutError) return { ok: false, kind: 'sql_timeout', error: error.message };
    if (error instanceof SqlExecutionError) return { ok: false, kind: 'sql_error', error: error.message };
    throw error;
  }
}

function restEpisode(dbId: string, options: EnvironmentOptions): Episode {
  const { restUrl, restEndpoints } = options;
  if (!restUrl || !restEndpoints) throw new Error('REST evaluation without a served API');
  const endpoints = restEndpoints.get(dbId) ?? new Map<string, ServedPath>();
  const episode: Episode = {
    runAll: (calls) => callsInOrder(episode, calls),
    call: async (call) => {
      const endpoint = endpoints.get(call.name);
      if (!endpoint) return { ok: false, kind: 'tool:unknown_tool', error: `unknown endpoint "${call.name}"` };
      // A value of the wrong type never reaches the endpoint (the server refuses the rest: unknown names, text that is no number).
      for (const [name, value] of Object.entries(call.arguments)) {
        const param = endpoint.parameters.find((p) => p.name === name);
        const problem = param && argumentTypeProblem(name, value, param);
        if (problem) return { ok: false, kind: 'tool:wrong_type', error: problem };
      }
      const args = Object.fromEntries(Object.entries(call.arguments).map(([name, value]) => [name, queryValue(value)]));
      const response = await callOverHttp(
        restUrl,
        { name: call.name, path: endpoint.path, arguments: args },
        options.timeoutMs,
      );
      if (response.status === 200) return { ok: true, output: response };
      const message = (response.body as { error?: { message?: string } } | null)?.error?.message;
      return { ok: false, kind: `http_${response.status}`, error: message ?? `HTTP ${response.status}` };
    },
  };
  return episode;
}

/**
 * A chain's endpoints, as REST's, with each call's references to earlier responses resolved
 * first (chain-references.ts): every successful response is kept under its call's label.
 */
function chainEpisode(dbId: string, options: EnvironmentOptions): Episode {
  const rest = restEpisode(dbId, options);
  const responses = new Map<string, unknown>();
  const episode: Episode = {
    runAll: (calls) => callsInOrder(episode, calls),
    call: async (call) => {
      const resolved = resolveReferences(call, responses);
      if (!resolved.ok) return { ok: false, kind: 'tool:bad_reference', error: resolved.error, sent: call };
      const result = await rest.call(resolved.call);
      if (result.ok) responses.set(call.label, (result.output as RestResponse).body);
      return { ...result, sent: resolved.call };
    },
  };
  return episode;
}

/** Direct invocation without an answer step: the calls in order, up to the first that fails. */
async function callsInOrder(episode: Episode, calls: readonly ToolCall[]): Promise<{ results: StepResult[] }> {
  const results: StepResult[] = [];
  for (const call of calls) {
    results.push(await episode.call(call));
    if (!results[results.length - 1].ok) break;
  }
  return { results };
}

/** What a query string carries for a value: JSON for anything that is not a scalar (the server then refuses it by type). */
function queryValue(value: unknown): ArgumentValue {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? value
    : JSON.stringify(value);
}

/** A step's output as plain JSON for a prompt or a trace, at most `maxRows` rows (`more: true` when it has more). */
export function observationJson(result: StepResult, maxRows = OBSERVED_ROWS): unknown {
  if (!result.ok) return { error: result.error };
  const output = result.output;
  if ('status' in output) {
    // A list of objects, or one object (or null), as the endpoint answers.
    const body = output.body;
    return Array.isArray(body) && body.length > maxRows ? { items: body.slice(0, maxRows), more: true } : body;
  }
  switch (output.kind) {
    case 'scalar':
      return output.value;
    case 'list':
      return truncated(output.values, maxRows, 'values');
    case 'table':
      return { columns: output.columns, ...truncated(output.rows, maxRows, 'rows') };
  }
}

function truncated<T>(values: readonly T[], max: number, field: string): Record<string, unknown> | T[] {
  if (values.length <= max) return field === 'values' ? [...values] : { [field]: values };
  return { [field]: values.slice(0, max), more: true };
}

/**
 * A plain output (pipeline/emit.ts plainOutput, or a REST body) as a conversation or an MCP
 * client is shown it: whole up to `rows` rows or values, else those and `more: true`.
 */
export function shown(value: unknown, rows: number): unknown {
  if (Array.isArray(value)) return value.length > rows ? { first: value.slice(0, rows), more: true } : value;
  if (value && typeof value === 'object' && Array.isArray((value as { rows?: unknown }).rows)) {
    const body = value as { rows: unknown[] };
    return body.rows.length > rows ? { ...body, rows: body.rows.slice(0, rows), more: true } : body;
  }
  return value;
}
