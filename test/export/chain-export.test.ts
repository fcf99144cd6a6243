import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseConfig } from '../../config/load.js';
import { EXPORT_DEFAULTS } from '../../config/schema.js';
import type { ToolCall } from '../../core/model.js';
import { resolveReferences } from '../../eval/chain-references.js';
import { loadEvalDataset, type EvalItem } from '../../eval/dataset.js';
import { openLiveTools } from '../../eval/live-tools.js';
import { conversationUnsupported, MAX_BRIDGED_RESPONSE_CHARS } from '../../export/conversation.js';
import type { ExportSample } from '../../export/sample.js';
import { runExport, type ExportOptions } from '../../export/run.js';
import { replaySample } from '../../mcp/replay.js';
import { createMcpServer, LABEL_META, serveHttp } from '../../mcp/server.js';
import { DEMO_SOURCE, generateDemoChains } from '../eval/fixtures.js';

/**
 * Chains through `nl2api export` and `nl2api mcp` on the demo: a chain is a multi-turn
 * conversation with each hop's response (the one a later hop takes its value from shown
 * whole), an xLAM plan whose references give the gold arguments, a VAKRA capability-3 record
 * whose calls and responses are the hops', an nl2api record as generated; it shares its
 * first hop's split and gets no negative. Over MCP, every chain replayed by reference
 * (`"$HOP1.<field>|<transform>$"`, resolved by the session) gives every recorded response.
 */

let root: string;
let chains: EvalItem[];
beforeAll(async () => {
  root = await generateDemoChains();
  chains = (await loadEvalDataset(path.join(root, 'dataset'), { formulation: 'chain' })).items;
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const jsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);

const responsesOf = (item: EvalItem) => item.published.output_after_executing_api as unknown[];

function options(out: string, overrides: Partial<ExportOptions> = {}): ExportOptions {
  return {
    formats: [...EXPORT_DEFAULTS.formats],
    split: 'none',
    shares: { ...EXPORT_DEFAULTS.shares },
    seed: 7,
    negatives: 1,
    restTools: 4,
    rows: 5,
    encoding: 'o200k_base',
    nearDuplicate: 0.8,
    dropOver: false,
    from: [{ dir: path.join(root, 'dataset'), databases: DEMO_SOURCE, weight: 1 }],
    out: path.join(root, out),
    config: parseConfig({ source: DEMO_SOURCE, progress: 'none' }),
    ...overrides,
  };
}

describe('an export of rest and chain', () => {
  let out: string;
  let summary: Awaited<ReturnType<typeof runExport>>['summary'];
  beforeAll(async () => {
    summary = (await runExport(options('all'))).summary;
    out = path.join(root, 'all');
  }, 120_000);

  test('every chain in every format but Live API-Bench, none with a negative, nothing invalid', () => {
    expect(summary.counts.invalid).toBe(0);
    expect(summary.counts.failed).toBe(0);
    expect(summary.counts.examples.chain?.train).toBe(chains.length);
    for (const format of ['nl2api', 'openai', 'hermes', 'xlam'])
      expect(jsonl(path.join(out, format, 'chain', 'train.jsonl'))).toHaveLength(chains.length);
    const records = jsonl<{ formulation: string; negative: boolean }>(path.join(out, 'nl2api', 'chain', 'train.jsonl'));
    expect(records.every((r) => r.formulation === 'chain' && !r.negative)).toBe(true);
    // Every question drawn a negative (--negatives 1): REST's have them, chains none.
    expect(jsonl<{ negative: boolean }>(path.join(out, 'nl2api', 'rest', 'train.jsonl')).some((r) => r.negative)).toBe(
      true,
    );
    const left = summary.unsupported.filter((u) => u.key.includes('/chain/'));
    expect(left.filter((u) => u.format === 'live-api-bench')).toHaveLength(chains.length);
    expect(left.every((u) => u.format === 'live-api-bench')).toBe(true);
  });

  test('OpenAI: a turn per hop, each answered by its whole response, in which the next hop finds its value', () => {
    type Message = { role: string; content?: string | null; tool_calls?: { function: { arguments: string } }[] };
    const lines = jsonl<{ messages: Message[] }>(path.join(out, 'openai', 'chain', 'train.jsonl'));
    lines.forEach(({ messages }, n) => {
      const item = chains[n];
      const hops = item.goldCalls.length;
      expect(messages.map((m) => m.role)).toEqual([
        'system',
        'user',
        ...Array.from({ length: hops }, () => ['assistant', 'tool']).flat(),
        'assistant',
      ]);
      const responses = responsesOf(item);
      for (let k = 0; k < hops - 1; k++) {
        const shown = JSON.parse(messages[3 + 2 * k].content!);
        expect(shown).toEqual(responses[k]);
        // The value the next hop passes is one the model was shown.
        const next = JSON.parse(messages[4 + 2 * k].tool_calls![0].function.arguments) as Record<string, unknown>;
        const bridged = Object.keys(item.hops![k + 1].binds).map((param) => next[param]);
        for (const value of bridged) expect(JSON.stringify(shown)).toContain(JSON.stringify(value));
      }
    });
  });

  test('xLAM: the hops as one plan whose references, resolved over the recorded responses, are the gold calls', () => {
    const lines = jsonl<{ answers: string }>(path.join(out, 'xlam', 'chain', 'train.jsonl'));
    let references = 0;
    lines.forEach(({ answers }, n) => {
      const item = chains[n];
      const plan = JSON.parse(answers) as ToolCall[];
      const responses = new Map(item.goldCalls.map((call, i) => [call.label, responsesOf(item)[i]]));
      plan.forEach((call, i) => {
        const resolved = resolveReferences(call, responses);
        expect(resolved).toEqual({ ok: true, call: { ...item.goldCalls[i], arguments: item.goldCalls[i].arguments } });
        references += JSON.stringify(call.arguments).includes('$HOP') ? 1 : 0;
      });
    });
    expect(references).toBeGreaterThan(0);
  });

  test('VAKRA capability 3: per domain, input and ground truth pair by uuid; the hops with their literal values and responses', () => {
    const folder = path.join(out, 'vakra', 'train', 'capability_3_multihop_reasoning');
    let records = 0;
    for (const file of readdirSync(path.join(folder, 'output'))) {
      const input = JSON.parse(readFileSync(path.join(folder, 'input', file), 'utf8')) as {
        uuid: string;
        domain: string;
        dialogue: { turns: { turn_id: number; query: string }[] };
      }[];
      const output = JSON.parse(readFileSync(path.join(folder, 'output', file), 'utf8')) as {
        uuid: string;
        output: {
          turn_id: number;
          answer: unknown[][];
          sequence: { tool_call: { name: string; arguments: unknown }[]; tool_response: unknown[] };
        }[];
      }[];
      expect(output.map((r) => r.uuid)).toEqual(input.map((r) => r.uuid));
      for (const [i, record] of output.entries()) {
        const item = chains.find((c) => `chain-${c.db}-${c.id}` === record.uuid)!;
        expect(input[i].domain).toBe(item.db);
        expect(input[i].dialogue.turns).toEqual([{ turn_id: 1, query: item.question }]);
        const [turn] = record.output;
        expect(turn.turn_id).toBe(1);
        expect(turn.answer).toEqual(item.gold.rows);
        expect(turn.sequence.tool_call).toEqual(item.goldCalls.map((c) => ({ name: c.name, arguments: c.arguments })));
        expect(turn.sequence.tool_response).toHaveLength(item.goldCalls.length);
        expect(turn.sequence.tool_response.slice(0, -1)).toEqual(responsesOf(item).slice(0, -1));
        records++;
      }
    }
    expect(records).toBe(chains.length);
    expect(existsSync(path.join(out, 'vakra', 'train', 'mcp_tool_universe_id_mapping.yaml'))).toBe(false);
  });

  test('a chain shares the split of its first hop’s question', async () => {
    const { summary: bySplit } = await runExport(
      options('by-question', {
        split: 'by-question',
        formats: ['nl2api'],
        shares: { train: 0.4, validation: 0.3, test: 0.3 },
      }),
    );
    expect(bySplit.counts.invalid).toBe(0);
    const splitOf = new Map<string, string>();
    for (const split of ['train', 'validation', 'test'])
      for (const f of ['rest', 'chain']) {
        const file = path.join(root, 'by-question', 'nl2api', f, `${split}.jsonl`);
        if (!existsSync(file)) continue;
        for (const r of jsonl<{ sample_id: string; db_id: string; negative: boolean }>(file))
          if (!r.negative) splitOf.set(`${f}/${r.db_id}/${r.sample_id}`, split);
      }
    expect(new Set(splitOf.values()).size).toBeGreaterThan(1);
    for (const chain of chains) {
      const first = (chain.published.first_hop as { sample_id: string }).sample_id;
      expect(splitOf.get(`chain/${chain.db}/${chain.id}`)).toBe(splitOf.get(`rest/${chain.db}/${first}`));
    }
  });

  test('a response too long to show whole leaves its chain out of the conversation formats, with the reason', () => {
    const chain = chains[0];
    const sample = (first: unknown) =>
      ({ item: chain, negative: false, outputs: [first, ...responsesOf(chain).slice(1)] }) as unknown as ExportSample;
    expect(conversationUnsupported(sample(responsesOf(chain)[0]))).toBeUndefined();
    const rows = Array.from({ length: 400 }, (_, i) => ({ name: `a fairly long value number ${i}` }));
    expect(conversationUnsupported(sample(rows))).toBe(
      `hop 1's response is over ${MAX_BRIDGED_RESPONSE_CHARS} characters of JSON, and hop 2 takes its value from all of it`,
    );
    // The last hop's response is the answer: previewed, never a reason.
    const last = { ...sample(responsesOf(chain)[0]), outputs: [responsesOf(chain)[0], rows] };
    expect(conversationUnsupported(last)).toBeUndefined();
  });
});

describe('chains over MCP (nl2api mcp --formulation chain)', () => {
  test('the REST endpoints as tools; every chain replayed by reference gives every recorded response', async () => {
    const dataset = await loadEvalDataset(path.join(root, 'dataset'), { formulation: 'chain' });
    const live = await openLiveTools(dataset, DEMO_SOURCE, parseConfig({ progress: 'none' }));
    try {
      for (const db of dataset.databases.keys()) {
        const server = await serveHttp(() =>
          createMcpServer({ dataset, db, environment: live.environment, maxRows: 100_000 }),
        );
        const connect = async () => {
          const client = new Client({ name: 'nl2api-test', version: '1' });
          await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
          return client;
        };
        try {
          const lister = await connect();
          const { tools } = await lister.listTools();
          expect(tools.map((t) => t.name)).toEqual(dataset.databases.get(db)!.tools.map((t) => t.function.name));
          // A reference that makes no single value is a tool error the client reads.
          const item = dataset.items.find((i) => i.db === db)!;
          await lister.callTool({
            name: item.goldCalls[0].name,
            arguments: item.goldCalls[0].arguments,
            _meta: { [LABEL_META]: 'FIRST' },
          });
          const param = Object.keys(item.hops![1].binds)[0];
          const refused = await lister.callTool({
            name: item.goldCalls[1].name,
            arguments: { ...item.goldCalls[1].arguments, [param]: '$FIRST.no_such_field|max$' },
          });
          expect(refused.isError).toBe(true);
          expect((refused.content as { text: string }[])[0].text).toMatch(/^tool:bad_reference: /);
          await lister.close();
          for (const chain of dataset.items.filter((i) => i.db === db)) {
            const client = await connect();
            try {
              expect({ id: chain.id, ...(await replaySample(client, chain)) }).toMatchObject({
                id: chain.id,
                equal: true,
              });
            } finally {
              await client.close();
            }
          }
        } finally {
          await server.close();
        }
      }
    } finally {
      await live.close();
    }
  }, 120_000);
});
