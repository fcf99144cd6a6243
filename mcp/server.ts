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
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolSpec } from '../core/model.js';
import { packageVersion } from '../core/package-root.js';
import type { EvalDataset, EvalItem } from '../eval/dataset.js';
import { openToolSession, shown, type EnvironmentOptions, type StepResult } from '../eval/environment.js';
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
 */

export interface McpToolsOptions {
  dataset: EvalDataset;
  db: string;
  environment: EnvironmentOptions;
  /** Rows of an output sent whole; past them, the first ones and `more: true`. */
  maxRows: number;
}

/** Where a call's label goes, in a request's `_meta` and in its result's. */
export const LABEL_META = 'nl2api/label';

/** A server for one client session. */
export function createMcpServer(options: McpToolsOptions): Server {
  const { tools, bindings } = toolsOf(options.dataset, options.db);
  const session = openToolSession(
    options.dataset.formulation,
    options.db,
    options.environment,
    bindings,
    options.maxRows,
  );
  let calls = 0;
  const server = new Server(
    {
      name: `nl2api ${options.dataset.datasetName} ${options.db} (${options.dataset.formulation})`,
      version: packageVersion(),
    },
    { capabilities: { tools: {} } },
  );
  const samples = new Map(options.dataset.items.filter((i) => i.db === options.db).map((item) => [item.id, item]));
  const listed = [
    ...tools.map((tool) => ({
      name: tool.function.name,
      description: tool.function.description,
      inputSchema: tool.function.parameters as { type: 'object'; properties?: Record<string, object> },
    })),
    ...(options.dataset.formulation === 'rest' ? [] : [startSampleTool([...samples.keys()])]),
  ];
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    if (request.params.name === START_SAMPLE && options.dataset.formulation !== 'rest') {
      const item = samples.get(String(request.params.arguments?.sample_id));
      if (!item)
        return {
          isError: true,
          content: [
            {
              type: 'text',
              text: `tool:bad_value: no sample ${JSON.stringify(request.params.arguments?.sample_id)} of ${options.db}`,
            },
          ],
        };
      return startSample(item, (call) => session.call(call), options.maxRows);
    }
    const given = request.params._meta?.[LABEL_META];
    const label = typeof given === 'string' && given ? given : `CALL_${++calls}`;
    const result = await session.call({ name: request.params.name, arguments: request.params.arguments ?? {}, label });
    return { ...resultOf(result, options.maxRows), _meta: { [LABEL_META]: label } };
  });
  return server;
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
  maxRows: number,
): Promise<CallToolResult> {
  const tables: Record<string, unknown> = {};
  for (const init of item.initialization) {
    const result = await call(init);
    if (!result.ok) return resultOf(result, maxRows);
    tables[init.label] = JSON.parse((resultOf(result, maxRows).content[0] as { text: string }).text);
  }
  return { content: [{ type: 'text', text: JSON.stringify(tables) }] };
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

function resultOf(result: StepResult, maxRows: number): Pick<CallToolResult, 'content' | 'isError'> {
  if (!result.ok) return { isError: true, content: [{ type: 'text', text: `${result.kind}: ${result.error}` }] };
  const output = shown('status' in result.output ? result.output.body : plainOutput(result.output), maxRows);
  return { content: [{ type: 'text', text: JSON.stringify(output) }] };
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
