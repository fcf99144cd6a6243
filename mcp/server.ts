import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { callsRest, type ToolOutput, type ToolSpec } from '../core/model.js';
import { packageVersion } from '../core/package-root.js';
import type { EvalDataset, EvalItem } from '../eval/dataset.js';
import {
  asStep,
  openToolSession,
  shown,
  type EnvironmentOptions,
  type LabelledOutputs,
  type StepResult,
} from '../eval/environment.js';
import { plainOutput } from '../pipeline/emit.js';
import { urlOf } from '../runtime/rest/server.js';

/**
 * A generated dataset's tools over the Model Context Protocol (`nl2api mcp`, issue 14), with
 * the official SDK: the tools of one database and formulation, listed with the very JSON
 * schemas of the published tool specs; each client session is a tool session of its own, so
 * SLOT and SEL outputs stay under their labels across calls (a later call passes
 * `"$LABEL$"`), and REST calls go to the live endpoints. A call's label is the request's
 * `_meta["nl2api/label"]` (or `CALL_<n>`), and comes back in the result's `_meta`. A call the
 * tools refuse, or whose SQL fails or times out, is an MCP tool error (`isError`), its text
 * `<kind>: <message>`; a fault of the server is a protocol error.
 *
 * A SLOT or SEL table or list longer than `maxRows` does not cross the wire (issue 35): the
 * call answers a preview, `{handle, count, first, more: true}` (its first rows by a LIMIT, its
 * row count by a `count(*)`), and the output stays in the session under its label, the handle:
 * a later call passes `"$handle$"`, and `read_output` reads it on by pages.
 */

export interface McpToolsOptions {
  dataset: EvalDataset;
  db: string;
  environment: EnvironmentOptions;
  /**
   * Rows of an output sent whole; past them, the first ones and `more: true` (SLOT and SEL: a
   * preview with the row count and the handle), and the default page of `read_output`.
   */
  maxRows: number;
}

/** Where a call's label goes, in a request's `_meta` and in its result's. */
export const LABEL_META = 'nl2api/label';

/** A server for one client session. */
export function createMcpServer(options: McpToolsOptions): Server {
  const { name, listed, bindings, samples } = servedDatabase(options);
  const session = openToolSession(
    options.dataset.formulation,
    options.db,
    options.environment,
    bindings,
    options.maxRows,
  );
  const present = presenter(session.outputs, options.maxRows);
  let calls = 0;
  const server = new Server(
    { name, version: packageVersion() },
    { capabilities: { tools: {} }, jsonSchemaValidator: sharedValidator() },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const args = request.params.arguments ?? {};
    if (!callsRest(options.dataset.formulation)) {
      if (request.params.name === START_SAMPLE) {
        const item = samples.get(String(args.sample_id));
        if (!item) return toolError(`tool:bad_value: no sample ${JSON.stringify(args.sample_id)} of ${options.db}`);
        return startSample(item, (call) => session.call(call), present.result);
      }
      if (request.params.name === READ_OUTPUT) return present.read(args);
    }
    const given = request.params._meta?.[LABEL_META];
    const label = typeof given === 'string' && given ? given : `CALL_${++calls}`;
    const result = await present.result(
      await session.call({ name: request.params.name, arguments: args, label }),
      label,
    );
    return { ...(result.ok ? json(result.value) : result.error), _meta: { [LABEL_META]: label } };
  });
  return server;
}

/** What every session of a database's server shares: its name, tool list, SEL bindings and samples. */
interface ServedDatabase {
  name: string;
  listed: Tool[];
  bindings: EvalItem['bindings'];
  samples: ReadonlyMap<string, EvalItem>;
}

/** Made once per dataset, database and rows (a server is made per client session). */
const servedDatabases = new WeakMap<EvalDataset, Map<string, ServedDatabase>>();

function servedDatabase({ dataset, db, maxRows }: McpToolsOptions): ServedDatabase {
  const ofDataset = servedDatabases.get(dataset) ?? new Map<string, ServedDatabase>();
  servedDatabases.set(dataset, ofDataset);
  const key = `${db}\0${maxRows}`;
  const known = ofDataset.get(key);
  if (known) return known;
  const { tools, bindings } = toolsOf(dataset, db);
  const samples = new Map(dataset.items.filter((i) => i.db === db).map((item) => [item.id, item]));
  const ours = callsRest(dataset.formulation) ? [] : [startSampleTool([...samples.keys()]), readOutputTool(maxRows)];
  const clash = tools.find((tool) => ours.some((own) => own.name === tool.function.name));
  if (clash) throw new Error(`a published tool of ${db} is named ${clash.function.name}, as one of the server's own`);
  const listed = [
    ...tools.map((tool) => ({
      name: tool.function.name,
      description: tool.function.description,
      inputSchema: tool.function.parameters as Tool['inputSchema'],
    })),
    ...ours,
  ];
  const served = { name: `nl2api ${dataset.datasetName} ${db} (${dataset.formulation})`, listed, bindings, samples };
  ofDataset.set(key, served);
  return served;
}

/**
 * One JSON schema validator for every session's server (the SDK's default builds an Ajv
 * instance per server, ~1.4 ms of a session's start; ours validates nothing: it asks clients
 * for no elicitation).
 */
let validator: AjvJsonSchemaValidator | undefined;
export function sharedValidator(): AjvJsonSchemaValidator {
  return (validator ??= new AjvJsonSchemaValidator());
}

/**
 * The listed start of a SLOT or SEL sample: its starting tables (`initialize_active_data`,
 * which no model is shown) defined in the session under their labels, so that a client that
 * reads only the tool list can begin where a sample begins and pass `"$starting_table_var$"`.
 */
export const START_SAMPLE = 'start_sample';

function startSampleTool(ids: readonly string[]) {
  return {
    name: START_SAMPLE,
    description:
      'Start a sample: loads its starting table(s) into this session and answers each under its label (`starting_table_var`, …), which later calls pass as `"$starting_table_var$"`.',
    inputSchema: {
      type: 'object' as const,
      properties: { sample_id: { type: 'string', enum: [...ids], description: 'The sample to start.' } },
      required: ['sample_id'],
    },
  };
}

async function startSample(
  item: EvalItem,
  call: (call: EvalItem['initialization'][number]) => Promise<StepResult>,
  present: Presenter['result'],
): Promise<CallToolResult> {
  const tables: Record<string, unknown> = {};
  for (const init of item.initialization) {
    const result = await present(await call(init), init.label);
    if (!result.ok) return result.error;
    tables[init.label] = result.value;
  }
  return json(tables);
}

/**
 * SLOT and SEL: the whole output of a labelled call, by pages (what a preview's `handle` is for).
 * Not a published tool: the server's, as `start_sample` is.
 */
export const READ_OUTPUT = 'read_output';

function readOutputTool(maxRows: number) {
  return {
    name: READ_OUTPUT,
    description:
      `Read the output of an earlier call of this session by its handle (its label). A table or list longer than ${maxRows} rows is answered as a preview ` +
      '`{"handle", "count", "first", "more": true}`: pass the handle to a later call as `"$handle$"` (the whole table is used), or here to read its rows: ' +
      '`{"handle", "count", "offset", "rows", "more"}`, `limit` rows from `offset` (a table\'s rows as records, a list\'s values; a scalar is answered as its value).',
    inputSchema: {
      type: 'object' as const,
      properties: {
        handle: {
          type: 'string',
          description: 'The label of the call whose output to read (`"$handle$"` also reads).',
        },
        offset: { type: 'integer', minimum: 0, description: 'Rows to skip (default 0).' },
        limit: { type: 'integer', minimum: 1, description: `Rows to read (default ${maxRows}).` },
      },
      required: ['handle'],
    },
  };
}

/** A JSON value to answer, or the tool error to answer instead. */
type Presented = { ok: true; value: unknown } | { ok: false; error: CallToolResult };

interface Presenter {
  /** A call's output as the client is shown it: whole, or a preview with its count and handle. */
  result: (step: StepResult, label: string) => Promise<Presented>;
  /** `read_output`: a page of a labelled output. */
  read: (args: Record<string, unknown>) => Promise<CallToolResult>;
}

function presenter(outputs: LabelledOutputs | undefined, maxRows: number): Presenter {
  /** Row counts of the outputs counted so far: a label's output never changes in its session. */
  const counts = new Map<string, number>();
  /** The output's row count, or the tool error its `count(*)` gave. */
  const countOf = async (
    label: string,
  ): Promise<{ ok: true; count: number } | { ok: false; error: CallToolResult }> => {
    const known = counts.get(label);
    if (known !== undefined) return { ok: true, count: known };
    // asStep words a failure as a call's would be: the count is a scalar output of its own.
    const counted = await asStep(async () => ({ kind: 'scalar', value: await outputs!.size(label) }));
    if (!counted.ok) return { ok: false, error: stepError(counted) };
    const count = Number((counted.output as { value: unknown }).value);
    counts.set(label, count);
    return { ok: true, count };
  };
  return {
    result: async (step, label) => {
      if (!step.ok) return { ok: false, error: stepError(step) };
      const output = step.output;
      if ('status' in output) return { ok: true, value: shown(output.body, maxRows) };
      const plain = plainOutput(output);
      if (!outputs || !Array.isArray(plain) || plain.length <= maxRows) return { ok: true, value: plain };
      const counted = await countOf(label);
      if (!counted.ok) return counted;
      return { ok: true, value: { handle: label, count: counted.count, first: plain.slice(0, maxRows), more: true } };
    },
    read: async (args) => {
      if (!outputs) return toolError(`tool:unknown_tool: ${READ_OUTPUT} reads SLOT and SEL outputs only`);
      const given = args.handle;
      if (given === undefined) return toolError(`tool:missing_argument: ${READ_OUTPUT} needs "handle"`);
      if (typeof given !== 'string')
        return toolError(`tool:wrong_type: "handle" must be a string, not ${JSON.stringify(given)}`);
      const handle = /^\$[^$]+\$$/.test(given) ? given.slice(1, -1) : given;
      for (const name of ['offset', 'limit'] as const) {
        const value = args[name];
        const least = name === 'offset' ? 0 : 1;
        if (value !== undefined && (!Number.isSafeInteger(value) || (value as number) < least))
          return toolError(`tool:bad_value: "${name}" must be an integer >= ${least}, not ${JSON.stringify(value)}`);
      }
      const unknownArgument = Object.keys(args).find((name) => !['handle', 'offset', 'limit'].includes(name));
      if (unknownArgument) return toolError(`tool:unknown_argument: ${READ_OUTPUT} takes no "${unknownArgument}"`);
      const labels = outputs.labels();
      if (!labels.includes(handle))
        return toolError(
          `tool:bad_reference: no output has the handle ${JSON.stringify(handle)} in this session (${labels.length ? `its handles: ${labels.join(', ')}` : 'no call has answered yet'})`,
        );
      const offset = (args.offset as number | undefined) ?? 0;
      const limit = (args.limit as number | undefined) ?? maxRows;
      const page = await asStep(() => outputs.read(handle, { offset, maxRows: limit + 1 }));
      if (!page.ok) return stepError(page);
      const plain = plainOutput(page.output as ToolOutput);
      if (!Array.isArray(plain)) return json(plain);
      const more = plain.length > limit;
      const rows = more ? plain.slice(0, limit) : plain;
      if (offset === 0 && !more) counts.set(handle, rows.length);
      const counted = await countOf(handle);
      if (!counted.ok) return counted.error;
      return json({ handle, count: counted.count, offset, rows, more });
    },
  };
}

function json(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/** A failed call as the client is told it: `<kind>: <message>`. */
function stepError(step: Extract<StepResult, { ok: false }>): CallToolResult {
  return toolError(`${step.kind}: ${step.error}`);
}

/**
 * The database's tools (all of them: a SEL sample lists its own few) and its SEL bindings
 * (each sample carries those of its own tools: the database's are all of them).
 */
function toolsOf(dataset: EvalDataset, db: string): { tools: ToolSpec[]; bindings: EvalItem['bindings'] } {
  const served = dataset.databases.get(db);
  if (!served) throw new Error(`the dataset has no ${dataset.formulation} tools of ${db}`);
  const items = dataset.items.filter((i) => i.db === db);
  const bindings: NonNullable<EvalItem['bindings']> = {};
  for (const item of items) Object.assign(bindings, item.bindings);
  return { tools: served.tools, bindings };
}

/** Serves one client over stdin/stdout until it goes away. */
export async function serveStdio(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  await closed;
}

export interface McpHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:39123/mcp`. */
  url: string;
  close(): Promise<void>;
}

export const MCP_PATH = '/mcp';

/**
 * Serves clients over Streamable HTTP at `/mcp` (127.0.0.1 unless told otherwise): a session
 * per client, its tool session with it, until the client ends it or the server closes.
 */
export async function serveHttp(newServer: () => Server, host = '127.0.0.1', port = 0): Promise<McpHttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== MCP_PATH)
      return reply(response, 404, 'not_found', `The MCP endpoint is ${MCP_PATH}.`);
    const id = request.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known && request.method === 'GET') return standaloneStreamRefused(response);
    if (known) return known.handleRequest(request, response);
    if (request.method !== 'POST') return reply(response, 400, 'bad_request', 'No such session.');
    const body = await readJson(request);
    if (body === undefined || !isInitializeRequest(body))
      return reply(response, 400, 'bad_request', 'A session starts with an initialize request.');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await newServer().connect(transport);
    return transport.handleRequest(request, response, body);
  };
  const http = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) reply(response, 500, 'internal_error', 'The request could not be served.');
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => resolve());
  });
  return {
    url: `${urlOf(http.address() as AddressInfo)}${MCP_PATH}`,
    close: async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * A client's GET opens a stream for messages the server sends unasked: ours sends none (tools
 * only, a fixed list; no logging, sampling or elicitation), so it answers 405, as the
 * transport's specification allows ("the server does not offer an SSE stream at this
 * endpoint"), instead of holding a stream open per session that the client aborts at its end
 * (~1.5 ms of a session's start and end, and a new connection for the next session).
 */
function standaloneStreamRefused(response: ServerResponse): void {
  response.setHeader('allow', 'POST, DELETE');
  reply(response, 405, 'method_not_allowed', 'This server sends no messages outside its answers: no stream to open.');
}

/** The request's JSON body (undefined if it has none or it is not JSON), at most 1 MB. */
async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

const MAX_BODY = 1 << 20;

function reply(response: ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify({ error: { code, message } }));
}
