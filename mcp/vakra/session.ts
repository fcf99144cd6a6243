import type { DatabaseInfo, SqlValue, ToolOutput } from '../../core/model.js';
import { asStep, type EnvironmentOptions } from '../../eval/environment.js';
import { vakraHandlePrefix } from '../../eval/predictions/vakra.js';
import { liveApiBenchJson, PyFloat } from '../../export/live-api-bench.js';
import {
  keyContextOf,
  makeSafe,
  publishedKeyName,
  type PublishedInitArguments,
} from '../../eval/predictions/published-names.js';
import { ToolSession } from '../../runtime/slot/execute.js';
import { nl2apiForm, slotFillingForm, type HeldTable } from './calls.js';
import { GET_DATA, getterName, vakraTools, type VakraTool } from './tools.js';
import type { Universe } from './universes.js';

/**
 * One client's session with VAKRA's capability-1 server, as mcp/mcp_server.py keeps it
 * (IBM/vakra environment/m3/python_tools): a current universe (the domain's first until
 * `get_data(tool_universe_id)` switches), tables kept server-side under handles
 * `<prefix>_<suffix>_<n>` (prefix by the tool that made the table, suffix the text before
 * the first `_` of its first key or `data`, n counted per prefix; switching universe forgets
 * them), a table answered as a peek `{handle, num_records, key_details}`, a scalar as Python's
 * `str()` of it, a list as JSON. The calls run on nl2api's runtime, each under a label of its
 * own in one nl2api tool session per universe.
 *
 * Errors: what VAKRA's server answers as text (an unknown universe, a missing or unknown
 * handle, an unknown key) is the same `{"error": …}` text; a tool this universe does not list,
 * or a call nl2api refuses or cannot run, is an MCP tool error (`isError`) with such a text.
 */

export interface VakraReply {
  text: string;
  isError?: boolean;
}

/** A universe switched to: its nl2api session, its starting table's keys, the handles made since. */
interface Current {
  universe: Universe;
  session: ToolSession;
  start: HeldTable;
  tools: Map<string, VakraTool>;
  /** Getter name → the VAKRA key it reads (selection universes). */
  getters: Map<string, string>;
  handles: Map<string, HeldTable>;
  counters: Map<string, number>;
  calls: number;
}

const PEEK_ROWS = 3;

export class VakraSession {
  private current?: Current;

  constructor(
    private readonly universes: ReadonlyMap<string, Universe>,
    private readonly db: DatabaseInfo,
    private readonly environment: EnvironmentOptions,
  ) {
    if (universes.size === 0) throw new Error(`no tool universes of ${db.dbId}`);
  }

  /** The current universe's tools (the domain's first universe until one is chosen). */
  async tools(): Promise<VakraTool[]> {
    return [...(await this.ensure()).tools.values()];
  }

  async call(name: string, args: Record<string, unknown>): Promise<VakraReply> {
    if (name === GET_DATA) return this.getData(args.tool_universe_id);
    const current = await this.ensure();
    if (!current.tools.has(name)) return failure(`Unknown tool: ${name}`);
    if (name === 'select_unique_values') return literalUnique(args.unique_array);
    if (name === 'truncate') return literalTruncate(args.truncate_array, args.n);
    const tables = this.tablesOf(current, name, args);
    if ('text' in tables) return tables;
    const invalid = invalidKeys(current, tables, args);
    if (invalid) return invalid;
    const getterKey = current.getters.get(name);
    const translated = nl2apiForm(slotFillingForm({ name, arguments: args }), tables, getterKey);
    if ('refused' in translated) return failure(translated.refused);
    const label = `call_${++current.calls}`;
    const call = { name: translated.name, arguments: translated.arguments, label };
    const step = await asStep(() =>
      current.session.call(call, translated.answer === 'list' ? undefined : { maxRows: PEEK_ROWS }),
    );
    if (!step.ok) return failure(`${step.kind}: ${step.error}`);
    const output = step.output as ToolOutput;
    if (translated.answer === 'list') return { text: liveApiBenchJson(valuesOf(output)) };
    if (translated.answer === 'scalar') return { text: pythonStr(scalarOf(output), translated.float === true) };
    const source = tables.get(String(args.data_label ?? args.data_label_1)) as HeldTable;
    const held = {
      label,
      keys: keysOf(output, source, {
        transformed: translated.transformed,
        retrieved: translated.arguments.key_name,
        projection: name === 'retrieve_data',
      }),
    };
    return { text: liveApiBenchJson(await this.peek(current, name, held, output)) };
  }

  private async getData(given: unknown): Promise<VakraReply> {
    if (given !== undefined && given !== null) {
      // VAKRA's GetDataInput takes a string; anything else is named as JSON.
      const id = typeof given === 'string' ? given : JSON.stringify(given);
      const universe = this.universes.get(id);
      if (!universe) {
        const available = [...this.universes.keys()].slice(0, 10);
        return {
          text: liveApiBenchJson({
            error: `Error: Unknown universe ID '${id}'. Available IDs (first 10): [${available.map((a) => `'${a}'`).join(', ')}]...`,
          }),
        };
      }
      if (universe.id !== this.current?.universe.id) {
        try {
          this.current = await this.open(universe);
        } catch (error) {
          return { text: liveApiBenchJson({ error: `Error switching to universe: ${(error as Error).message}` }) };
        }
      }
    }
    const current = await this.ensure();
    const output = await current.session.output(current.start.label, { maxRows: PEEK_ROWS });
    return { text: liveApiBenchJson(await this.peek(current, GET_DATA, current.start, output)) };
  }

  private async ensure(): Promise<Current> {
    return (this.current ??= await this.open(this.universes.values().next().value as Universe));
  }

  /** A fresh nl2api session on the universe's starting table(s); no handles yet. */
  private async open(universe: Universe): Promise<Current> {
    const session = new ToolSession(this.db, this.environment.executor, {
      timeoutMs: this.environment.timeoutMs,
      pool: this.environment.pool,
    });
    for (const init of universe.initialization) await session.define(init);
    const [first] = universe.initialization;
    const output = await session.output(first.label, { maxRows: PEEK_ROWS });
    if (output.kind !== 'table') throw new Error(`the starting table of ${universe.id} is not a table`);
    const keys = vakraOrder(
      output.columns.map((key) => [publishedKeyName(key, keyContextOf(first)), key] as const),
      universe.published,
    );
    const tools = vakraTools(
      universe.serverType,
      keys.map(([vakra]) => vakra),
    );
    const getters =
      universe.serverType === 'selection'
        ? new Map(keys.map(([vakra]) => [getterName(vakra), vakra]))
        : new Map<string, string>();
    return {
      universe,
      session,
      start: { label: first.label, keys },
      tools: new Map(tools.map((tool) => [tool.name, tool])),
      getters,
      handles: new Map(),
      counters: new Map(),
      calls: 0,
    };
  }

  /** The tables a call's `data_label*` arguments name, or the error VAKRA answers for a missing or unknown handle. */
  private tablesOf(current: Current, name: string, args: Record<string, unknown>): Map<string, HeldTable> | VakraReply {
    const properties = current.tools.get(name)?.inputSchema.properties ?? {};
    const fields = ['data_label', 'data_label_1', 'data_label_2'].filter((field) => field in properties);
    const available = [...current.handles.keys()];
    const tables = new Map<string, HeldTable>();
    for (const field of fields) {
      const handle = args[field];
      if (handle === undefined)
        return {
          text: liveApiBenchJson({
            error: `Missing required argument '${field}'. Pass the handle string returned by a previous tool call as ${field}=<handle>. Available handles: [${available.map((h) => `'${h}'`).join(', ')}]`,
          }),
        };
      const held = typeof handle === 'string' ? current.handles.get(handle) : undefined;
      if (!held)
        return {
          text: liveApiBenchJson({
            error: `Unknown handle ${JSON.stringify(handle)} in ${field}. Available handles: [${available.map((h) => `'${h}'`).join(', ')}]`,
          }),
        };
      tables.set(handle as string, held);
    }
    return tables;
  }

  /** The table kept under a new handle, as VAKRA peeks at it. */
  private async peek(current: Current, tool: string, held: HeldTable, output: ToolOutput): Promise<Peek> {
    const prefix = vakraHandlePrefix(tool) ?? 'result';
    const n = (current.counters.get(prefix) ?? 0) + 1;
    current.counters.set(prefix, n);
    const first = held.keys[0]?.[0] ?? '';
    const handle = `${prefix}_${first.includes('_') ? first.slice(0, first.indexOf('_')) : 'data'}_${n}`;
    current.handles.set(handle, held);
    const rows = rowsOf(output);
    const columns = output.kind === 'table' ? output.columns : held.keys.map(([, key]) => key);
    return {
      handle,
      num_records: await current.session.size(held.label),
      key_details: held.keys.map(([name, key]) => {
        const values = rows.slice(0, PEEK_ROWS).map((row) => row[columns.indexOf(key)] ?? null);
        return { name, dtype: dtypeOf(values), first_3_values: values };
      }),
    };
  }
}

interface Peek {
  handle: string;
  num_records: number;
  key_details: { name: string; dtype: string; first_3_values: SqlValue[] }[];
}

/**
 * The starting table's keys in the order VAKRA's initialize_active_data gives them: table by
 * table as its published arguments list them (its SELECT names every column of the first
 * alias, then the next), which is the order the handle's suffix is read from.
 */
function vakraOrder(keys: HeldTable['keys'], args: PublishedInitArguments): HeldTable['keys'] {
  const prefixes = Object.entries(args.alias_to_table_dict).map(([alias, table], i) => ({
    prefix: alias === '' ? '' : `${makeSafe(table.modified_table_name)}_`,
    i,
  }));
  const tableOf = (name: string) =>
    prefixes.filter(({ prefix }) => name.startsWith(prefix)).sort((a, b) => b.prefix.length - a.prefix.length)[0]?.i ??
    0;
  return keys
    .map((key, position) => ({ key, table: tableOf(key[0]), position }))
    .sort((a, b) => a.table - b.table || a.position - b.position)
    .map(({ key }) => key);
}

/** VAKRA's key check: every key a call names is one of its table's (the first it reads). */
function invalidKeys(
  current: Current,
  tables: ReadonlyMap<string, HeldTable>,
  args: Record<string, unknown>,
): VakraReply | undefined {
  if (!('key_name' in args)) return undefined;
  const source = tables.values().next().value ?? current.start;
  const valid = source.keys.map(([name]) => name);
  const asked = Array.isArray(args.key_name) ? args.key_name : [args.key_name];
  const invalid = asked.filter((key) => !valid.includes(key as string));
  if (invalid.length === 0) return undefined;
  const list = (keys: unknown[]) => `[${keys.map((k) => `'${String(k)}'`).join(', ')}]`;
  return {
    text: liveApiBenchJson({
      error: `Invalid key_name ${list(invalid)}. Valid keys in current universe ('${current.universe.id}'): ${list(valid)}`,
    }),
  };
}

/**
 * The keys of a call's table as VAKRA names them: its source's, in their order; a transform
 * rewrites its key in place (nl2api's result is the column it adds), a projection keeps the
 * keys it retrieved, in the order asked for.
 */
function keysOf(
  output: ToolOutput,
  source: HeldTable,
  { transformed, retrieved, projection }: { transformed?: string; retrieved: unknown; projection: boolean },
): HeldTable['keys'] {
  const columns = output.kind === 'table' ? output.columns : [];
  if (transformed !== undefined) {
    // nl2api's transform appends its column (the table keeps columns VAKRA no longer shows).
    const added = columns[columns.length - 1];
    return source.keys.map(([name, key]) => [name, name === transformed ? added : key] as const);
  }
  // A list is one key's values: nl2api's retrieve_data of the key asked for.
  if (output.kind === 'list') return source.keys.filter(([, key]) => key === retrieved);
  // A projection's keys come in the order asked for; any other table keeps its source's order
  // (nl2api's columns follow its own join order). nl2api's table also holds the column a
  // transform rewrote (VAKRA's does not): only the keys VAKRA has.
  if (projection) return columns.flatMap((column) => source.keys.filter(([, key]) => key === column));
  return source.keys.filter(([, key]) => columns.includes(key));
}

function rowsOf(output: ToolOutput): SqlValue[][] {
  if (output.kind === 'table') return output.rows;
  if (output.kind === 'list') return output.values.map((value) => [value]);
  return [[output.value]];
}

function valuesOf(output: ToolOutput): SqlValue[] {
  return output.kind === 'list' ? output.values : rowsOf(output).map((row) => row[0]);
}

function scalarOf(output: ToolOutput): SqlValue {
  return output.kind === 'scalar' ? output.value : (rowsOf(output)[0]?.[0] ?? null);
}

/** pandas' dtype of a column, as far as its first values tell. */
function dtypeOf(values: readonly SqlValue[]): string {
  const known = values.filter((value) => value !== null);
  if (known.length === 0) return 'object';
  if (known.every((value) => typeof value === 'number' && Number.isInteger(value))) return 'int64';
  return known.every((value) => typeof value === 'number') ? 'float64' : 'object';
}

/** Python's `str()` of a scalar VAKRA answers: `None`, `13`, `13.0` for a float, a text as it is. */
export function pythonStr(value: SqlValue, float: boolean): string {
  if (value === null) return 'None';
  if (typeof value === 'string') return value;
  return float ? liveApiBenchJson(new PyFloat(value)) : liveApiBenchJson(value);
}

function failure(message: string): VakraReply {
  return { text: liveApiBenchJson({ error: message }), isError: true };
}

/** VAKRA's select_unique_values over a list written in: its distinct values, first occurrences first. */
function literalUnique(values: unknown): VakraReply {
  if (!Array.isArray(values)) return failure('Input validation error: unique_array must be a list');
  const seen = new Map<string, unknown>();
  for (const value of values) if (!seen.has(JSON.stringify(value))) seen.set(JSON.stringify(value), value);
  return { text: liveApiBenchJson([...seen.values()]) };
}

/** VAKRA's truncate over a list written in: its first n elements (a table is not something nl2api holds written in). */
function literalTruncate(values: unknown, n: unknown): VakraReply {
  if (!Array.isArray(values)) return failure("nl2api's truncate takes a list written in, not a table");
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
    return failure('Input validation error: n must be a non-negative integer');
  return { text: liveApiBenchJson(values.slice(0, n)) };
}
