import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { parseConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { loadEvalDataset, type EvalDataset } from '../eval/dataset.js';
import { openLiveTools } from '../eval/live-tools.js';
import { createMcpServer, LABEL_META, START_SAMPLE } from '../mcp/server.js';
import type { ParameterSpec } from '../runtime/rest/spec.js';
import type { SqlExecutor, SqlRequest } from '../runtime/sql/executor.js';
import { createSqlPool } from '../runtime/sql/pool.js';

/**
 * Issue 33 item 3, "types enforced at the edge", measured: every parameter of every endpoint of
 * a generated REST output, served as `nl2api serve` and `nl2api mcp` serve it (eval's live tools
 * over a SQL executor that counts the statements it is given), sent values of the wrong type,
 * out of its listed values or past its bounds, over HTTP (text, as a query string carries it)
 * and over MCP (JSON, as a client sends it), and each endpoint called without a required
 * parameter and with an unknown one. Bars: every such request a 400 with a JSON error naming
 * the parameter (HTTP) or an `isError` result naming it (MCP), no 5xx, and not one statement
 * executed; then one valid call per endpoint over each, which must answer and execute (the
 * counter counts). `sequenceTypeSweep` does the same for the SLOT and SEL tools over MCP.
 */

/** An SqlExecutor that counts the statements it runs. */
export interface CountingExecutor extends SqlExecutor {
  executed: number;
}

export function countingExecutor(inner: SqlExecutor): CountingExecutor {
  const counting: CountingExecutor = {
    executed: 0,
    run: (request: SqlRequest) => {
      counting.executed++;
      return inner.run(request);
    },
    ...(inner.runTimed
      ? {
          runTimed: (request: SqlRequest) => {
            counting.executed++;
            return inner.runTimed!(request);
          },
        }
      : {}),
    buildVariantTable: (request) => inner.buildVariantTable(request),
    forget: (dbPath) => inner.forget?.(dbPath),
    close: () => inner.close(),
  };
  return counting;
}

export interface TypeSweepFigures {
  databases: number;
  endpoints: number;
  parameters: number;
  /** Parameters with an `enum`, a `minimum` or a `maximum`. */
  constrained: number;
  http: {
    sent: number;
    /** 400 with a JSON error body naming the parameter (or the unknown one): the bar is all of them. */
    refused: number;
    serverErrors: number;
    statuses: Record<string, number>;
    executed: number;
  };
  mcp: { sent: number; isError: number; executed: number };
  /** One valid call per endpoint over each, after the sweep: answered, and executed. */
  valid: { calls: number; answered: number; executed: number };
  seconds: number;
  /** A few of the requests that missed a bar. */
  violations: string[];
}

const enc = encodeURIComponent;
const MAX_VIOLATIONS = 20;

/** A value the parameter takes: its example, else one of its type. */
export function validValue(param: ParameterSpec): string | number | boolean {
  if (param.example !== undefined) return param.example;
  if (param.enum) return param.enum[0];
  if (param.type === 'string')
    return param.format === 'date-time' ? '2020-01-01 00:00:00' : param.format ? '2020-01-01' : 'x';
  if (param.type === 'boolean') return true;
  return param.minimum ?? param.maximum ?? 1;
}

/** Out of the listed values and past the bounds, where the spec has them (JSON values; a query string sends their text). */
function constraintBreakers(param: ParameterSpec): unknown[] {
  const values: unknown[] = [];
  if (param.minimum !== undefined) values.push(param.minimum - 1);
  if (param.maximum !== undefined) values.push(param.maximum + 1);
  if (param.enum)
    values.push(
      param.type === 'string'
        ? 'zz-not-a-listed-value'
        : Math.max(...param.enum.filter((v): v is number => typeof v === 'number')) + 1,
    );
  return values;
}

/** Query-string values of the wrong type for a parameter: each a list of values sent under its name. */
export function wrongQueryValues(param: ParameterSpec, maxStringLength: number): string[][] {
  const one = (values: string[]) => values.map((value) => [value]);
  const repeated = [
    [String(validValue(param)), String(validValue(param))],
    ['a', 'b'],
  ];
  const breakers = constraintBreakers(param).map((value) => [String(value)]);
  switch (param.type) {
    case 'integer':
      return [
        ...one(['abc', '1.5', '1e308', '-1e308', 'Infinity', '-Infinity', 'NaN', '', 'true', '0x10']),
        ...one([String(2 ** 53 + 2), '99999999999999999999', '-99999999999999999999']),
        ...repeated,
        ...breakers,
      ];
    case 'number':
      return [
        ...one(['abc', '1e308', '-1e308', '1e400', 'Infinity', '-Infinity', 'NaN', '', 'true', '18446744073709551616']),
        ...repeated,
        ...breakers,
      ];
    case 'boolean':
      return [...one(['maybe', '2', '', 'TRUE']), ...repeated];
    case 'string':
      return [
        ['x'.repeat(maxStringLength + 1)],
        ...repeated,
        ...(param.format === 'date'
          ? one(['2019-09-01_zz', '2019-13-01', '2019-9-1', 'yesterday', ''])
          : param.format === 'date-time'
            ? one(['2019-09-01 25:00:00', '2019-09-01T12:00:00Z', '2019-13-01 00:00:00', ''])
            : []),
        ...breakers,
      ];
  }
}

/** JSON values of the wrong type for a parameter, as an MCP client could send them. */
export function wrongJsonValues(param: ParameterSpec, maxStringLength: number): unknown[] {
  const structures = [null, [1, [2]], { a: 1 }, []];
  const breakers = constraintBreakers(param);
  switch (param.type) {
    case 'integer':
      return [...structures, 'abc', 1.5, '1.5', 1e308, -1e308, '1e308', true, '', ...breakers];
    case 'number':
      return [...structures, 'abc', 1e308, '1e308', 'Infinity', 2 ** 64, true, '', ...breakers];
    case 'boolean':
      return [...structures, 1, 'maybe', ''];
    case 'string':
      return [
        ...structures,
        7,
        1.5,
        true,
        'x'.repeat(maxStringLength + 1),
        ...(param.format === 'date' ? ['2019-09-01_zz', '2019-13-01'] : []),
        ...(param.format === 'date-time' ? ['2019-09-01 25:00:00'] : []),
        ...breakers,
      ];
  }
}

/** The sweep over a REST dataset (every database of it), its live tools over a counting executor. */
export async function typeSweep(dataset: EvalDataset, source: string, config: Config): Promise<TypeSweepFigures> {
  if (dataset.formulation !== 'rest') throw new Error('the type sweep is over a REST dataset');
  const maxStringLength = config.rest.maxStringLength;
  const started = performance.now();
  const figures: TypeSweepFigures = {
    databases: dataset.databases.size,
    endpoints: 0,
    parameters: 0,
    constrained: 0,
    http: { sent: 0, refused: 0, serverErrors: 0, statuses: {}, executed: 0 },
    mcp: { sent: 0, isError: 0, executed: 0 },
    valid: { calls: 0, answered: 0, executed: 0 },
    seconds: 0,
    violations: [],
  };
  const violation = (text: string) =>
    void (figures.violations.length < MAX_VIOLATIONS && figures.violations.push(text));
  await withCountingTools(dataset, source, config, async (live, executor) => {
    const base = live.environment.restUrl!;
    for (const [db, served] of dataset.databases) {
      const endpoints = served.endpoints ?? [];
      figures.endpoints += endpoints.length;
      for (const endpoint of endpoints) {
        figures.parameters += endpoint.parameters.length;
        figures.constrained += endpoint.parameters.filter(
          (p) => p.enum !== undefined || p.minimum !== undefined || p.maximum !== undefined,
        ).length;
      }

      // Over HTTP: every wrong value of every parameter, the others valid.
      const before = executor.executed;
      for (const endpoint of endpoints) {
        const required = endpoint.parameters.filter((p) => p.required);
        const pairs = (except?: string): [string, string][] =>
          required.filter((p) => p.name !== except).map((p) => [p.name, String(validValue(p))]);
        const cases: { names: string; query: [string, string][] }[] = [];
        for (const param of endpoint.parameters)
          for (const values of wrongQueryValues(param, maxStringLength))
            cases.push({
              names: param.name,
              query: [...pairs(param.name), ...values.map((v) => [param.name, v] as [string, string])],
            });
        for (const param of required) cases.push({ names: param.name, query: pairs(param.name) });
        cases.push({ names: 'zz_unknown', query: [...pairs(), ['zz_unknown', '1']] });
        for (const { names, query } of cases) {
          const target = `${endpoint.path}?${query.map(([n, v]) => `${enc(n)}=${enc(v)}`).join('&')}`;
          const response = await fetch(new URL(target, base));
          const text = await response.text();
          figures.http.sent++;
          figures.http.statuses[response.status] = (figures.http.statuses[response.status] ?? 0) + 1;
          if (response.status >= 500) figures.http.serverErrors++;
          const message = errorMessage(text);
          if (response.status === 400 && message?.includes(`'${names}'`)) figures.http.refused++;
          else violation(`HTTP ${response.status} ${target.slice(0, 160)}: ${text.slice(0, 200)}`);
        }
      }
      figures.http.executed += executor.executed - before;

      // Over MCP: the same endpoints as tools, JSON values of the wrong type.
      const client = await mcpClient(dataset, db, live.environment);
      try {
        const mcpBefore = executor.executed;
        for (const endpoint of endpoints) {
          const required = endpoint.parameters.filter((p) => p.required);
          const args = (except?: string) =>
            Object.fromEntries(required.filter((p) => p.name !== except).map((p) => [p.name, validValue(p)]));
          const cases: { names: string; args: Record<string, unknown> }[] = [];
          for (const param of endpoint.parameters)
            for (const value of wrongJsonValues(param, maxStringLength))
              cases.push({ names: param.name, args: { ...args(param.name), [param.name]: value } });
          for (const param of required) cases.push({ names: param.name, args: args(param.name) });
          cases.push({ names: 'zz_unknown', args: { ...args(), zz_unknown: 1 } });
          for (const { names, args: given } of cases) {
            const result = await client.callTool({ name: endpoint.operationId, arguments: given });
            figures.mcp.sent++;
            const text = resultText(result);
            if (result.isError && text.includes(`'${names}'`)) figures.mcp.isError++;
            else violation(`MCP ${endpoint.operationId} ${JSON.stringify(given).slice(0, 160)}: ${text.slice(0, 200)}`);
          }
        }
        figures.mcp.executed += executor.executed - mcpBefore;

        // The server alive, and the counter counting: one valid call per endpoint over each.
        const validBefore = executor.executed;
        for (const endpoint of endpoints) {
          const required = endpoint.parameters.filter((p) => p.required);
          const query = required.map((p) => `${enc(p.name)}=${enc(String(validValue(p)))}`).join('&');
          const response = await fetch(new URL(query ? `${endpoint.path}?${query}` : endpoint.path, base));
          await response.arrayBuffer();
          const result = await client.callTool({
            name: endpoint.operationId,
            arguments: Object.fromEntries(required.map((p) => [p.name, validValue(p)])),
          });
          figures.valid.calls += 2;
          if (response.status === 200) figures.valid.answered++;
          else violation(`valid call ${endpoint.operationId} over HTTP: ${response.status}`);
          if (!result.isError) figures.valid.answered++;
          else violation(`valid call ${endpoint.operationId} over MCP: ${resultText(result).slice(0, 200)}`);
        }
        figures.valid.executed += executor.executed - validBefore;
      } finally {
        await client.close();
      }
    }
  });
  figures.seconds = (performance.now() - started) / 1000;
  return figures;
}

export interface SequenceSweepFigures {
  formulation: 'slot' | 'sel';
  samples: number;
  calls: number;
  /** Calls the tools refused (`isError`). */
  isError: number;
  /** Refusals that are the SQL driver's, not the tool's (`sql_error: ...`): the bar is 0. */
  driverErrors: number;
  /** Refusals whose text does not name the tool called (`<kind>: <tool> (label "…"): …`): the bar is 0. */
  unnamed: number;
  /** Statements executed for refused calls: the bar is 0. */
  executedWhenRefused: number;
  violations: string[];
}

/** Values of the wrong type put in place of every argument of every gold call (and of each nested argument). */
const WRONG_ARGUMENTS: unknown[] = [1e308, -1e308, 2 ** 64, 'x', { a: 1 }, [1, [2]], [], null, true, 1.5];

/**
 * SLOT or SEL over MCP: every published sample in a session of its own, each of its calls (its
 * starting tables' `initialize_active_data`, then its gold calls) tried first with every argument
 * (every field of an object argument, the first element of a list) replaced by a value of the
 * wrong type, and with `limit` 1e308 and "x", then made as published (the starting tables by
 * `start_sample`).
 */
export async function sequenceTypeSweep(
  dataset: EvalDataset,
  source: string,
  config: Config,
): Promise<SequenceSweepFigures> {
  if (dataset.formulation !== 'slot' && dataset.formulation !== 'sel')
    throw new Error('the sequence sweep is over a SLOT or SEL dataset');
  const figures: SequenceSweepFigures = {
    formulation: dataset.formulation,
    samples: 0,
    calls: 0,
    isError: 0,
    driverErrors: 0,
    unnamed: 0,
    executedWhenRefused: 0,
    violations: [],
  };
  const violation = (text: string) =>
    void (figures.violations.length < MAX_VIOLATIONS && figures.violations.push(text));
  await withCountingTools(dataset, source, config, async (live, executor) => {
    for (const item of dataset.items) {
      figures.samples++;
      const client = await mcpClient(dataset, item.db, live.environment);
      try {
        let n = 0;
        // The starting tables' calls too (a client may make them), each tried under a label of its own.
        for (const call of [...item.initialization, ...item.goldCalls]) {
          for (const args of wrongArgumentSets(call.arguments)) {
            const before = executor.executed;
            const result = await client.callTool({
              name: call.name,
              arguments: args,
              _meta: { [LABEL_META]: `SWEEP_${++n}` },
            });
            figures.calls++;
            if (!result.isError) continue;
            figures.isError++;
            const text = resultText(result);
            const shown = `${item.id} ${call.name} ${JSON.stringify(args).slice(0, 160)}: ${text.slice(0, 200)}`;
            if (executor.executed > before) {
              figures.executedWhenRefused += executor.executed - before;
              violation(`executed, then refused: ${shown}`);
            }
            if (!text.startsWith('tool:')) {
              figures.driverErrors++;
              violation(shown);
            } else if (!text.includes(`: ${call.name} (label "`)) {
              figures.unnamed++;
              violation(shown);
            }
          }
          if (call === item.initialization[item.initialization.length - 1])
            await client.callTool({ name: START_SAMPLE, arguments: { sample_id: item.id } });
          else if (!item.initialization.includes(call))
            await client.callTool({
              name: call.name,
              arguments: call.arguments,
              _meta: { [LABEL_META]: call.label },
            });
        }
      } finally {
        await client.close();
      }
    }
  });
  return figures;
}

/** The live tools of a dataset over a SQL pool whose statements are counted; everything closed after `run`. */
async function withCountingTools(
  dataset: EvalDataset,
  source: string,
  config: Config,
  run: (live: Awaited<ReturnType<typeof openLiveTools>>, executor: CountingExecutor) => Promise<void>,
): Promise<void> {
  const pool = createSqlPool({ size: config.sqlWorkers });
  try {
    const executor = countingExecutor(pool);
    const live = await openLiveTools(dataset, source, config, executor);
    try {
      await run(live, executor);
    } finally {
      await live.close();
    }
  } finally {
    await pool.close();
  }
}

function wrongArgumentSets(args: Record<string, unknown>): Record<string, unknown>[] {
  const sets: Record<string, unknown>[] = [];
  for (const [name, value] of Object.entries(args)) {
    for (const wrong of WRONG_ARGUMENTS) sets.push({ ...args, [name]: wrong });
    if (value && typeof value === 'object' && !Array.isArray(value))
      for (const inner of Object.keys(value))
        for (const wrong of WRONG_ARGUMENTS) sets.push({ ...args, [name]: { ...value, [inner]: wrong } });
    if (Array.isArray(value)) {
      const [first, ...rest] = value as unknown[];
      for (const wrong of WRONG_ARGUMENTS) sets.push({ ...args, [name]: [wrong, ...rest] });
      if (first && typeof first === 'object' && !Array.isArray(first))
        for (const inner of Object.keys(first))
          for (const wrong of WRONG_ARGUMENTS) sets.push({ ...args, [name]: [{ ...first, [inner]: wrong }, ...rest] });
    }
  }
  sets.push({ ...args, limit: 1e308 }, { ...args, limit: 'x' });
  return sets;
}

async function mcpClient(
  dataset: EvalDataset,
  db: string,
  environment: Parameters<typeof createMcpServer>[0]['environment'],
): Promise<Client> {
  const server = createMcpServer({ dataset, db, environment, maxRows: 5 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'nl2api-type-sweep', version: '1' });
  await client.connect(clientSide);
  return client;
}

function resultText(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((part) => part.text ?? '').join('\n');
}

/** The message of a `{"error":{"code","message"}}` body, or undefined for any other body. */
function errorMessage(text: string): string | undefined {
  try {
    const error = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    return typeof error?.code === 'string' && typeof error.message === 'string' ? error.message : undefined;
  } catch {
    return undefined;
  }
}

export function typeSweepLines(f: TypeSweepFigures, sequences: readonly SequenceSweepFigures[] = []): string[] {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const statuses = Object.entries(f.http.statuses)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');
  const httpPass = f.http.refused === f.http.sent && f.http.executed === 0 && f.http.serverErrors === 0;
  const mcpPass = f.mcp.isError === f.mcp.sent && f.mcp.executed === 0;
  return [
    `REST types at the edge: ${f.parameters} parameters (${f.constrained} with enum/bounds) of ${f.endpoints} endpoints, ${f.databases} databases, ${f.seconds.toFixed(1)} s`,
    `  HTTP: ${f.http.sent} wrong values, missing and unknown parameters: ${statuses}; 400 naming the parameter ${f.http.refused}, 5xx ${f.http.serverErrors}, statements executed ${f.http.executed} (${ok(httpPass)})`,
    `  MCP: ${f.mcp.sent} calls with wrong JSON values, missing and unknown arguments: isError naming the argument ${f.mcp.isError}, statements executed ${f.mcp.executed} (${ok(mcpPass)})`,
    `  then ${f.valid.calls} valid calls (one per endpoint over each): ${f.valid.answered} answered, ${f.valid.executed} statements executed (${ok(f.valid.answered === f.valid.calls && f.valid.executed > 0)})`,
    ...sequences.map(
      (s) =>
        `  ${s.formulation.toUpperCase()} over MCP: ${s.calls} calls with wrong-type arguments over ${s.samples} samples, ${s.isError} refused; the driver's message ${s.driverErrors}, not naming the tool ${s.unnamed}, executed when refused ${s.executedWhenRefused} (${ok(s.driverErrors + s.unnamed + s.executedWhenRefused === 0)})`,
    ),
    ...[...f.violations, ...sequences.flatMap((s) => s.violations)].slice(0, MAX_VIOLATIONS).map((v) => `  e.g. ${v}`),
  ];
}

/**
 * The REST sweep over the REST output, then SLOT and SEL over the sequence output (the same
 * folder when one run made all three), at most `samplesPerDatabase` samples of each database.
 */
export async function typeSweeps(
  outputs: { rest: string; sequences: string },
  source: string,
  samplesPerDatabase?: number,
): Promise<{ rest: TypeSweepFigures; sequences: SequenceSweepFigures[] }> {
  const config = parseConfig({ source, progress: 'none' });
  const rest = await typeSweep(await loadEvalDataset(outputs.rest, { formulation: 'rest' }), source, config);
  const sequences: SequenceSweepFigures[] = [];
  for (const formulation of ['slot', 'sel'] as const) {
    const dataset = await loadEvalDataset(outputs.sequences, {
      formulation,
      ...(samplesPerDatabase ? { limit: samplesPerDatabase } : {}),
    });
    sequences.push(await sequenceTypeSweep(dataset, source, config));
  }
  return { rest, sequences };
}

/** `node dist/bench/type-sweep.js <generated output> <source> [<samples per database>]`: the sweeps alone. */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [output, source, limit] = process.argv.slice(2);
  const { rest, sequences } = await typeSweeps(
    { rest: path.resolve(output), sequences: path.resolve(output) },
    path.resolve(source),
    limit ? Number(limit) : undefined,
  );
  process.stdout.write(`${typeSweepLines(rest, sequences).join('\n')}\n`);
}
