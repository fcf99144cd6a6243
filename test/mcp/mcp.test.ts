import { rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseConfig } from '../../config/load.js';
import type { Formulation, ToolCall } from '../../core/model.js';
import { packageRoot } from '../../core/package-root.js';
import { loadEvalDataset, type EvalDataset, type EvalItem } from '../../eval/dataset.js';
import { openLiveTools, type LiveTools } from '../../eval/live-tools.js';
import { replaySample } from '../../mcp/replay.js';
import { recordedOutputs } from '../../eval/answer-labels.js';
import {
  createMcpServer,
  LABEL_META,
  READ_OUTPUT,
  serveHttp,
  START_SAMPLE,
  type McpHttpServer,
} from '../../mcp/server.js';
import { DEMO_SOURCE, generateDemo } from '../eval/fixtures.js';

/**
 * `nl2api mcp` through the SDK's own client, over Streamable HTTP and stdio: the tool list is
 * the published tool specs, and every published sample of the demo, replayed call by call in
 * one session (labels given in `_meta`), gives its recorded output.
 */

let root: string;
beforeAll(async () => {
  root = await generateDemo();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DBS = ['bookstore', 'cycling_club'];
const text = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0].text;

/** Each sample replayed in a session of its own (its labels are its own); how many were, and the pages of previewed answers read. */
async function expectReplays(
  connect: () => Promise<Client>,
  items: readonly EvalItem[],
): Promise<{ samples: number; reads: number }> {
  let reads = 0;
  for (const item of items) {
    const client = await connect();
    try {
      const replay = await replaySample(client, item);
      expect({ id: item.id, ...replay }).toMatchObject({ id: item.id, equal: true });
      reads += replay.reads;
    } finally {
      await client.close();
    }
  }
  return { samples: items.length, reads };
}

async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: 'nl2api-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe.each(['slot', 'sel', 'rest'] as Formulation[])('%s over Streamable HTTP', (formulation) => {
  let dataset: EvalDataset;
  let live: LiveTools;
  beforeAll(async () => {
    dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation });
    live = await openLiveTools(dataset, DEMO_SOURCE, parseConfig({ progress: 'none' }));
  }, 60_000);
  afterAll(() => live?.close());

  test.each(DBS)(
    '%s: the published tools, and every sample replayed gives its recorded output',
    async (db) => {
      const server: McpHttpServer = await serveHttp(() =>
        createMcpServer({ dataset, db, environment: live.environment, maxRows: 100_000 }),
      );
      const client = await httpClient(server.url);
      try {
        const { tools } = await client.listTools();
        const published = dataset.databases.get(db)!.tools;
        expect(tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))).toEqual([
          ...published.map((t) => ({
            name: t.function.name,
            description: t.function.description,
            inputSchema: t.function.parameters,
          })),
          // SLOT and SEL: the listed start of a sample (its starting tables are not a published tool), and the reader of outputs by handle.
          ...(formulation === 'rest'
            ? []
            : [expect.objectContaining({ name: START_SAMPLE }), expect.objectContaining({ name: READ_OUTPUT })]),
        ]);
        const items = dataset.items.filter((item) => item.db === db);
        expect(await expectReplays(() => httpClient(server.url), items)).toEqual({ samples: items.length, reads: 0 });
        // A call the tools refuse is a tool error the client reads, not a protocol failure.
        const refused = await client.callTool({ name: 'no_such_tool', arguments: {} });
        expect(refused.isError).toBe(true);
        expect(text(refused)).toMatch(formulation === 'rest' ? /unknown endpoint/ : /^tool:/);
      } finally {
        await client.close();
        await server.close();
      }
    },
    120_000,
  );
});

test('REST over MCP: a value of the wrong type for any parameter of any endpoint is a tool error, never a request', async () => {
  const dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation: 'rest' });
  const live = await openLiveTools(dataset, DEMO_SOURCE, parseConfig({ progress: 'none' }));
  let refused = 0;
  try {
    for (const db of DBS) {
      const server = await serveHttp(() =>
        createMcpServer({ dataset, db, environment: live.environment, maxRows: 10 }),
      );
      const client = await httpClient(server.url);
      try {
        for (const endpoint of dataset.databases.get(db)!.endpoints ?? [])
          for (const param of endpoint.parameters) {
            const wrong: unknown[] = [[1, [2]], { a: 1 }, null, ...(param.type === 'string' ? [7, true] : [])];
            for (const value of wrong) {
              const result = await client.callTool({ name: endpoint.operationId, arguments: { [param.name]: value } });
              expect({ isError: result.isError, text: text(result) }).toEqual({
                isError: true,
                text: expect.stringMatching(
                  new RegExp(`^tool:wrong_type: argument '${param.name}' must be an? \\w+, not `),
                ),
              });
              refused++;
            }
          }
      } finally {
        await client.close();
        await server.close();
      }
    }
  } finally {
    await live.close();
  }
  expect(refused).toBeGreaterThan(0);
}, 120_000);

test('over stdio: `nl2api mcp` as the client starts it is one session, its labelled outputs kept across calls', async () => {
  // The built CLI (`npm test` builds first), as the other CLI tests run it: through tsx, each session's
  // process and its SQL workers spent a second or more transpiling the sources.
  const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
  const dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation: 'slot', dbIds: ['bookstore'] });
  const stdioClient = async () => {
    const client = new Client({ name: 'nl2api-test', version: '1' });
    const args = ['mcp', '--out', path.join(root, 'dataset'), '--source', DEMO_SOURCE, '--formulation', 'slot'];
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, ...args, '--db', 'bookstore'],
        stderr: 'inherit',
      }),
    );
    return client;
  };
  // The samples with the longest chains: their later calls read earlier outputs by label.
  const longest = [...dataset.items].sort((a, b) => b.goldCalls.length - a.goldCalls.length).slice(0, 2);
  expect(longest[0].goldCalls.length).toBeGreaterThan(1);
  expect((await expectReplays(stdioClient, longest)).samples).toBe(2);
}, 120_000);

test('over HTTP, requests outside a session are refused in the project format; the server binds to loopback', async () => {
  const dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation: 'slot', dbIds: ['bookstore'] });
  const live = await openLiveTools(dataset, DEMO_SOURCE, parseConfig({ progress: 'none' }));
  const server = await serveHttp(() =>
    createMcpServer({ dataset, db: 'bookstore', environment: live.environment, maxRows: 10 }),
  );
  try {
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
      });
    const cases: [string, Promise<Response>, number][] = [
      ['another path', fetch(server.url.replace('/mcp', '/elsewhere')), 404],
      ['a call before initialize', post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'), 400],
      ['not JSON', post('{'), 400],
      ['an unknown session', fetch(server.url, { headers: { 'mcp-session-id': 'nope' } }), 400],
    ];
    for (const [what, response, status] of cases) {
      const answered = await response;
      expect({ what, status: answered.status }).toEqual({ what, status });
      expect(await answered.json()).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
    }
    // Outputs past --rows rows: a preview, the first ones with the count and the handle, and `more`.
    const client = new Client({ name: 'nl2api-test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    try {
      // Within a session, a GET for a stream of messages sent unasked: none are, 405 (the client goes on without).
      const get = await fetch(server.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': transport.sessionId! },
      });
      expect(get.status).toBe(405);
      expect(await get.json()).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String) } });
      const [init] = dataset.items[0].initialization;
      const result = await client.callTool({ name: init.name, arguments: init.arguments });
      const output = JSON.parse(text(result)) as { handle?: string; count?: number; first?: unknown[]; more?: boolean };
      expect(output).toEqual({ handle: 'CALL_1', count: expect.any(Number), first: expect.any(Array), more: true });
      expect(output.first).toHaveLength(10);
      expect(output.count).toBeGreaterThan(10);
    } finally {
      await client.close();
    }
  } finally {
    await server.close();
    await live.close();
  }
}, 60_000);

/** A labelled output read back whole by its handle, `limit` rows a page; the pages' offsets and counts checked on the way. */
async function readWhole(client: Client, handle: string, limit: number): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (;;) {
    const result = await client.callTool({ name: READ_OUTPUT, arguments: { handle, offset: rows.length, limit } });
    expect(result.isError).toBeFalsy();
    const page = JSON.parse(text(result)) as {
      handle: string;
      count: number;
      offset: number;
      rows: unknown[];
      more: boolean;
    };
    expect(page).toMatchObject({ handle: handle.replace(/^\$(.*)\$$/, '$1'), offset: rows.length });
    rows.push(...page.rows);
    expect(page.rows.length).toBeLessThanOrEqual(limit);
    if (!page.more) {
      expect(page.count).toBe(rows.length);
      return rows;
    }
    expect(page.rows).toHaveLength(limit);
  }
}

describe.each(['slot', 'sel'] as const)('%s: long outputs previewed with their handles', (formulation) => {
  let dataset: EvalDataset;
  let live: LiveTools;
  /** A server that previews past 3 rows, and one that sends every output whole. */
  let previewing: McpHttpServer;
  let whole: McpHttpServer;
  beforeAll(async () => {
    dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation, dbIds: ['bookstore'] });
    live = await openLiveTools(dataset, DEMO_SOURCE, parseConfig({ progress: 'none' }));
    const serve = (maxRows: number) =>
      serveHttp(() => createMcpServer({ dataset, db: 'bookstore', environment: live.environment, maxRows }));
    previewing = await serve(3);
    whole = await serve(100_000);
  }, 60_000);
  afterAll(async () => {
    await previewing?.close();
    await whole?.close();
    await live?.close();
  });

  /** Each call of `calls` in one session of `server` under its label, then `then` in that session; the parsed outputs. */
  async function session(
    server: McpHttpServer,
    calls: readonly ToolCall[],
    then: (client: Client) => Promise<void> = async () => {},
  ): Promise<Map<string, unknown>> {
    const client = await httpClient(server.url);
    try {
      const outputs = new Map<string, unknown>();
      for (const call of calls) {
        const result = await client.callTool({
          name: call.name,
          arguments: call.arguments,
          _meta: { [LABEL_META]: call.label },
        });
        expect({ label: call.label, isError: result.isError }).toEqual({ label: call.label, isError: undefined });
        outputs.set(call.label, JSON.parse(text(result)));
      }
      await then(client);
      return outputs;
    } finally {
      await client.close();
    }
  }

  /** A sample whose starting table is longer than 3 rows and whose first gold call reads it. */
  const chained = () =>
    dataset.items.find(
      (i) =>
        i.goldCalls.length >= 2 &&
        JSON.stringify(i.goldCalls[0].arguments).includes(`"$${i.initialization[0].label}$"`),
    )!;

  test('a long table is a preview with its count and handle, read back by handle it is the whole output, and later calls read it as "$handle$"', async () => {
    const item = chained();
    const calls = [...item.initialization, ...item.goldCalls];
    const start = item.initialization[0].label;
    const full = await session(whole, calls);
    const table = full.get(start) as unknown[];
    expect(table.length).toBeGreaterThan(3);
    const readBack = new Map<string, unknown>();
    const previewed = await session(previewing, calls, async (client) => {
      // By pages of 2 rows, and in one page; the handle given bare or as a reference.
      expect(await readWhole(client, start, 2)).toEqual(table);
      expect(await readWhole(client, `$${start}$`, 1_000_000)).toEqual(table);
      // Every output of the chain (each later call read the earlier ones as "$handle$"), read whole.
      for (const call of calls) {
        const output = full.get(call.label);
        if (Array.isArray(output)) readBack.set(call.label, await readWhole(client, call.label, 3));
        else {
          const result = await client.callTool({ name: READ_OUTPUT, arguments: { handle: call.label } });
          readBack.set(call.label, JSON.parse(text(result)));
        }
      }
    });
    expect(previewed.get(start)).toEqual({ handle: start, count: table.length, first: table.slice(0, 3), more: true });
    for (const call of calls) {
      const output = full.get(call.label);
      expect({ [call.label]: readBack.get(call.label) }).toEqual({ [call.label]: output });
      // Short outputs and scalars as before: whole; longer ones previewed.
      const long = Array.isArray(output) && output.length > 3;
      expect({ [call.label]: previewed.get(call.label) }).toEqual({
        [call.label]: long
          ? { handle: call.label, count: output.length, first: output.slice(0, 3), more: true }
          : output,
      });
    }
  }, 60_000);

  test('read_output: an unknown handle and bad arguments are clear tool errors', async () => {
    const item = chained();
    await session(previewing, item.initialization, async (client) => {
      const read = async (args: Record<string, unknown>) => {
        const result = await client.callTool({ name: READ_OUTPUT, arguments: args });
        return { isError: result.isError, text: text(result) };
      };
      const start = item.initialization[0].label;
      expect(await read({ handle: 'nope' })).toEqual({
        isError: true,
        text: `tool:bad_reference: no output has the handle "nope" in this session (its handles: ${item.initialization.map((i) => i.label).join(', ')})`,
      });
      expect(await read({})).toEqual({
        isError: true,
        text: expect.stringMatching(/^tool:missing_argument: .*"handle"/),
      });
      expect(await read({ handle: 7 })).toEqual({
        isError: true,
        text: expect.stringMatching(/^tool:wrong_type: "handle"/),
      });
      for (const bad of [{ offset: -1 }, { offset: 1.5 }, { limit: 0 }, { limit: '5' }])
        expect(await read({ handle: start, ...bad })).toEqual({
          isError: true,
          text: expect.stringMatching(new RegExp(`^tool:bad_value: "${Object.keys(bad)[0]}" must be an integer`)),
        });
      expect(await read({ handle: start, page: 2 })).toEqual({
        isError: true,
        text: expect.stringMatching(/^tool:unknown_argument: .*"page"/),
      });
      // Past the end: no rows, no more.
      const count = (JSON.parse((await read({ handle: start })).text) as { count: number }).count;
      expect(JSON.parse((await read({ handle: start, offset: count + 5 })).text)).toEqual({
        handle: start,
        count,
        offset: count + 5,
        rows: [],
        more: false,
      });
    });
    // Before any call: no handles at all.
    await session(previewing, [], async (client) => {
      const result = await client.callTool({ name: READ_OUTPUT, arguments: { handle: 'starting_table_var' } });
      expect({ isError: result.isError, text: text(result) }).toEqual({
        isError: true,
        text: 'tool:bad_reference: no output has the handle "starting_table_var" in this session (no call has answered yet)',
      });
    });
  }, 60_000);

  test('every sample replayed with previews: its answers read by handle equal the recorded output', async () => {
    const items = dataset.items.filter((i) => i.db === 'bookstore');
    const replayed = await expectReplays(() => httpClient(previewing.url), items);
    expect(replayed.samples).toBe(items.length);
    // Some answers are longer than 3 rows: the replay read them by handle.
    expect(replayed.reads).toBeGreaterThan(0);
  }, 120_000);
});

test('start_sample: a client that reads only the tool list starts a sample, then calls its gold tools by label', async () => {
  for (const formulation of ['slot', 'sel'] as const) {
    const dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation, dbIds: ['bookstore'] });
    const live = await openLiveTools(dataset, DEMO_SOURCE, parseConfig({ progress: 'none' }));
    const server = await serveHttp(() =>
      createMcpServer({ dataset, db: 'bookstore', environment: live.environment, maxRows: 100_000 }),
    );
    const client = await httpClient(server.url);
    try {
      const item = dataset.items.find((i) => i.goldCalls.length === 2)!;
      const started = await client.callTool({ name: START_SAMPLE, arguments: { sample_id: item.id } });
      expect(Object.keys(JSON.parse(text(started)))).toEqual(item.initialization.map((i) => i.label));
      const outputs = [];
      for (const call of item.goldCalls) {
        const result = await client.callTool({
          name: call.name,
          arguments: call.arguments,
          _meta: { [LABEL_META]: call.label },
        });
        expect(result.isError).toBeFalsy();
        outputs.push(JSON.parse(text(result)));
      }
      expect(outputs[outputs.length - 1]).toEqual(recordedOutputs(item).values().next().value);
      const unknown = await client.callTool({ name: START_SAMPLE, arguments: { sample_id: 'nope' } });
      expect({ isError: unknown.isError, text: text(unknown) }).toEqual({
        isError: true,
        text: expect.stringMatching(/no sample "nope"/),
      });
    } finally {
      await client.close();
      await server.close();
      await live.close();
    }
  }
}, 60_000);
