import { rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseConfig } from '../../config/load.js';
import type { Formulation } from '../../core/model.js';
import { packageRoot } from '../../core/package-root.js';
import { loadEvalDataset, type EvalDataset, type EvalItem } from '../../eval/dataset.js';
import { openLiveTools, type LiveTools } from '../../eval/live-tools.js';
import { recordedAnswers, replaySample } from '../../mcp/replay.js';
import { createMcpServer, LABEL_META, serveHttp, START_SAMPLE, type McpHttpServer } from '../../mcp/server.js';
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

/** Each sample replayed in a session of its own (its labels are its own); how many were. */
async function expectReplays(connect: () => Promise<Client>, items: readonly EvalItem[]): Promise<number> {
  for (const item of items) {
    const client = await connect();
    try {
      expect({ id: item.id, ...(await replaySample(client, item)) }).toMatchObject({ id: item.id, equal: true });
    } finally {
      await client.close();
    }
  }
  return items.length;
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
          // SLOT and SEL: the listed start of a sample (its starting tables are not a published tool).
          ...(formulation === 'rest' ? [] : [expect.objectContaining({ name: START_SAMPLE })]),
        ]);
        const items = dataset.items.filter((item) => item.db === db);
        expect(await expectReplays(() => httpClient(server.url), items)).toBeGreaterThan(0);
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
  expect(await expectReplays(stdioClient, longest)).toBe(2);
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
    // Outputs past --rows rows: the first ones and `more`.
    const client = await httpClient(server.url);
    try {
      const [init] = dataset.items[0].initialization;
      const result = await client.callTool({ name: init.name, arguments: init.arguments });
      const output = JSON.parse((result.content as { text: string }[])[0].text) as {
        first?: unknown[];
        more?: boolean;
      };
      expect(output.first).toHaveLength(10);
      expect(output.more).toBe(true);
    } finally {
      await client.close();
    }
  } finally {
    await server.close();
    await live.close();
  }
}, 60_000);

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
      expect(outputs[outputs.length - 1]).toEqual(recordedAnswers(item).values().next().value);
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
