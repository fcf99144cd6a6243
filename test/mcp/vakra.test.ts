import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { stringify } from 'yaml';
import { answerDiffers } from '../../bench/vakra-replay.js';
import { packageRoot } from '../../core/package-root.js';
import { loadEvalDataset, type EvalItem } from '../../eval/dataset.js';
import { vakraUuid as universeId } from '../../eval/predictions/vakra-uuid.js';
import { publishedSequence } from '../../export/published/calls.js';
import { VAKRA } from '../../export/published/dialects.js';
import { firstColumnsOf } from '../../export/published/first-columns.js';
import { publishedInitialization } from '../../eval/predictions/published-names.js';
import { nl2apiInitialization } from '../../mcp/vakra/universes.js';
import { DEMO_SOURCE, generateDemo } from '../eval/fixtures.js';

/**
 * `nl2api mcp --protocol vakra` as IBM VAKRA's runner starts it (the built CLI over stdio, the
 * domain in MCP_DOMAIN), through the SDK's client: universes switched by get_data, handles
 * named as VAKRA's server names them (and as nl2api's VAKRA export expects), answers equal to
 * the samples' gold, SEL getters, and the errors a VAKRA client meets.
 */

let root: string;
let items: EvalItem[];
beforeAll(async () => {
  root = await generateDemo();
  const dataset = path.join(root, 'dataset');
  items = [
    ...(await loadEvalDataset(dataset, { formulation: 'slot', dbIds: ['bookstore'] })).items,
    ...(await loadEvalDataset(dataset, { formulation: 'sel', dbIds: ['bookstore'] })).items,
  ];
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function vakraClient(extra: string[] = [], domain = 'bookstore'): Promise<Client> {
  const client = new Client({ name: 'vakra-runner', version: '1' });
  const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
  const args = [
    cli,
    'mcp',
    '--protocol',
    'vakra',
    '--out',
    path.join(root, 'dataset'),
    '--source',
    DEMO_SOURCE,
    ...extra,
  ];
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args,
      env: { ...(process.env as Record<string, string>), MCP_DOMAIN: domain },
      stderr: 'inherit',
    }),
  );
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  return { text: (result.content as { text: string }[])[0].text, isError: result.isError === true };
}

const byId = (formulation: string, id: string) => items.find((i) => i.formulation === formulation && i.id === id)!;

test("a mapping's init arguments read back as the nl2api starting table they were published from", () => {
  for (const item of items)
    for (const init of item.initialization)
      expect(nl2apiInitialization(publishedInitialization(init, item.db).arguments, item.db)).toEqual({
        ...init,
        label: 'starting_table_var',
      });
});

describe('over stdio, as VAKRA runs it', () => {
  let client: Client;
  beforeAll(async () => {
    client = await vakraClient();
  }, 60_000);
  afterAll(() => client?.close());

  test('get_data, a filter by handle, an aggregate: VAKRA handles, peeks and the gold answer', async () => {
    const item = byId('slot', '6'); // filter_data, then a count
    const start = JSON.parse((await call(client, 'get_data', { tool_universe_id: universeId(item) })).text);
    expect(start).toEqual({
      handle: expect.stringMatching(/^retrieved_[A-Za-z0-9]+_1$/),
      num_records: expect.any(Number),
      key_details: expect.arrayContaining([
        { name: expect.any(String), dtype: expect.any(String), first_3_values: expect.any(Array) },
      ]),
    });
    expect(start.key_details[0].first_3_values).toHaveLength(3);
    const translated = vakraTranslation(item);
    if ('problem' in translated) throw new Error(translated.problem);
    const [filterCall, aggregateCall] = translated.calls;
    expect(filterCall.arguments.data_label).toBe(start.handle);
    const filtered = JSON.parse((await call(client, filterCall.name, filterCall.arguments)).text);
    expect(filtered.handle).toMatch(/^filtered_[A-Za-z0-9]+_1$/);
    expect(filtered.num_records).toBeLessThan(start.num_records);
    const answer = await call(client, aggregateCall.name, { ...aggregateCall.arguments, data_label: filtered.handle });
    expect(answer).toEqual({ text: String(item.gold.rows[0][0]), isError: false });
  });

  test('every bookstore sample the VAKRA export can write, replayed as its evaluator does: its handles, its answer', async () => {
    let replayed = 0;
    for (const item of items) {
      const translated = vakraTranslation(item);
      if ('problem' in translated) continue;
      const texts = [(await call(client, 'get_data', { tool_universe_id: universeId(item) })).text];
      for (const step of translated.calls) {
        const reply = await call(client, step.name, step.arguments);
        expect({ uuid: universeId(item), step: step.name, isError: reply.isError }).toEqual({
          uuid: universeId(item),
          step: step.name,
          isError: false,
        });
        texts.push(reply.text);
      }
      // Every table answered under the handle the export wrote for it.
      translated.responses.forEach((response, i) => {
        const handle = (response as { handle?: string } | null)?.handle;
        if (handle) expect(JSON.parse(texts[i]).handle).toBe(handle);
      });
      expect({ uuid: universeId(item), problem: answerDiffers(texts, item.gold.rows) }).toEqual({
        uuid: universeId(item),
        problem: undefined,
      });
      replayed++;
    }
    // (The others use what VAKRA's tools cannot say: grouping, nl2api's extra conditions and operations.)
    expect(replayed).toBeGreaterThanOrEqual(20);
  }, 60_000);

  test("a selection universe lists VAKRA's selection tools and a getter per key; a getter gives the key's values", async () => {
    const item = byId('sel', '6');
    const start = JSON.parse((await call(client, 'get_data', { tool_universe_id: universeId(item) })).text);
    const names = (await client.listTools()).tools.map((t) => t.name);
    const getters = start.key_details.map((k: { name: string }) => `get_${k.name}s`);
    expect(names.slice(0, getters.length)).toEqual(getters);
    expect(names).toEqual(
      expect.arrayContaining(['select_data_equal_to', 'compute_data_argmax', 'truncate', 'get_data']),
    );
    expect(names).not.toContain('filter_data');
    const values = JSON.parse((await call(client, getters[0], { data_label: start.handle })).text);
    expect(values).toHaveLength(start.num_records);
    expect(values.slice(0, 3)).toEqual(start.key_details[0].first_3_values);
    // The tools take handles as strings, described as VAKRA describes them.
    const select = (await client.listTools()).tools.find((t) => t.name === 'select_data_equal_to')!;
    expect(select.inputSchema.properties?.data_label).toEqual({
      type: 'string',
      description: expect.stringMatching(/^Handle string/),
    });
  });

  test('errors as a VAKRA client meets them', async () => {
    const unknownUniverse = await call(client, 'get_data', { tool_universe_id: 'slot-bookstore-nope' });
    expect(unknownUniverse).toEqual({
      text: expect.stringMatching(/^\{"error": "Error: Unknown universe ID 'slot-bookstore-nope'/),
      isError: false,
    });
    const item = byId('slot', '6');
    const start = JSON.parse((await call(client, 'get_data', { tool_universe_id: universeId(item) })).text);
    const key = start.key_details[0].name;
    expect(
      await call(client, 'filter_data', {
        data_label: 'filtered_nope_9',
        key_name: key,
        value: 1,
        condition: 'equal_to',
      }),
    ).toEqual({
      text: expect.stringMatching(/^\{"error": "Unknown handle .*filtered_nope_9.*Available handles: \['retrieved_/),
      isError: false,
    });
    expect(await call(client, 'filter_data', { key_name: key, value: 1, condition: 'equal_to' })).toEqual({
      text: expect.stringMatching(/Missing required argument 'data_label'/),
      isError: false,
    });
    expect(await call(client, 'sort_data', { data_label: start.handle, key_name: 'no_such_key' })).toEqual({
      text: expect.stringMatching(/^\{"error": "Invalid key_name \['no_such_key'\]\. Valid keys in current universe/),
      isError: false,
    });
    expect(
      await call(client, 'aggregate_data', {
        data_label: start.handle,
        key_name: key,
        aggregation_operation: 'argmax',
      }),
    ).toEqual({
      text: expect.stringMatching(/nl2api has no argmax/),
      isError: true,
    });
    expect(await call(client, 'select_data_equal_to', { data_label: start.handle, key_name: key, value: 1 })).toEqual({
      text: expect.stringMatching(/Unknown tool: select_data_equal_to/),
      isError: true,
    });
    // A call nl2api's runtime refuses is a tool error with its reason, and the session goes on.
    const refused = await call(client, 'transform_data', {
      data_label: start.handle,
      key_name: key,
      operation_type: 'rot13',
    });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((await call(client, 'get_data')).text).handle).toMatch(/^retrieved_[A-Za-z0-9]+_2$/);
  });
});

test('a mapping YAML adds its universes (VAKRA’s generate script writes one); MCP_DOMAIN picks the domain', async () => {
  const item = byId('slot', '6');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-vakra-'));
  const mapping = path.join(dir, 'mcp_tool_universe_id_mapping.yaml');
  const [init] = item.initialization;
  writeFileSync(
    mapping,
    stringify({
      'mapped-1': {
        domain: 'bookstore',
        server_type: 'slot_filling',
        init_args: publishedInitialization(init, 'bookstore').arguments,
        query: item.question,
      },
      'other-domain': {
        domain: 'cycling_club',
        server_type: 'slot_filling',
        init_args: { condition_sequence: [], alias_to_table_dict: {} },
        query: '',
      },
    }),
  );
  const client = await vakraClient(['--universes', mapping]);
  try {
    const fromMapping = JSON.parse((await call(client, 'get_data', { tool_universe_id: 'mapped-1' })).text);
    const fromDataset = JSON.parse((await call(client, 'get_data', { tool_universe_id: universeId(item) })).text);
    expect(fromMapping).toEqual({ ...fromDataset, handle: fromMapping.handle });
    expect((await call(client, 'get_data', { tool_universe_id: 'other-domain' })).text).toMatch(/Unknown universe ID/);
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

function columnsOf(table: string): string | undefined {
  return firstColumnsOf(DEMO_SOURCE, 'bookstore')?.get(table.toLowerCase());
}

/** The sample's calls as nl2api's VAKRA export writes them (the init call apart). */
const vakraTranslation = (item: EvalItem) => publishedSequence(item, [], VAKRA, columnsOf);
