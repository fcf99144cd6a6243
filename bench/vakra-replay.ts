import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { packageRoot } from '../core/package-root.js';

/**
 * `nl2api mcp --protocol vakra` checked against the ground truth of nl2api's VAKRA export
 * (`vakra/<split>/capability_1_bi_apis/output/<db>.json`): per domain, the server started as
 * VAKRA's runner starts it (`MCP_DOMAIN` set, stdio, one client for the whole domain), and per
 * record its calls replayed as VAKRA's evaluator replays them (`initialize_active_data`
 * replaced by `get_data(<uuid>)`, the rest as written, handles and all); the last answer is
 * compared with the record's `answer` rows. A scalar text (`13`, `13.0`, `None`) with the one
 * value; a list with the values (as a multiset); a table's peek, which is all VAKRA shows of a
 * table, by its number of records and its first rows (each one of the answer's rows).
 *
 * The export's universe mapping is given to the server (`--universes`) as VAKRA's server reads
 * it; `--dataset-only`: the universes of the generated dataset alone.
 *
 *   node dist/bench/vakra-replay.js <export>/vakra/<split> <generated output> <BIRD dir> [--dataset-only]
 */

export interface ReplayFigures {
  formulation: string;
  records: number;
  equal: number;
  calls: number;
  seconds: number;
  /** A few of the records that were not equal, and why. */
  problems: string[];
}

interface GroundTruth {
  uuid: string;
  output: [{ answer: unknown[][]; sequence: { tool_call: { name: string; arguments: Record<string, unknown> }[] } }];
}

export async function vakraReplay(
  vakraSplit: string,
  generated: string,
  birdDir: string,
  withMapping = true,
): Promise<ReplayFigures[]> {
  const folder = path.join(vakraSplit, 'capability_1_bi_apis', 'output');
  const figures = new Map<string, ReplayFigures>();
  // The export's universe mapping, as VAKRA's server loads it (when the export wrote one).
  const written = path.join(vakraSplit, 'mcp_tool_universe_id_mapping.yaml');
  const mapping = withMapping && existsSync(written) ? written : undefined;
  for (const file of readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const records = JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as GroundTruth[];
    const client = await startServer(file.slice(0, -'.json'.length), generated, birdDir, mapping);
    try {
      for (const record of records) {
        const formulation = record.uuid.slice(0, record.uuid.indexOf('-'));
        let f = figures.get(formulation);
        if (!f)
          figures.set(formulation, (f = { formulation, records: 0, equal: 0, calls: 0, seconds: 0, problems: [] }));
        const started = performance.now();
        const [turn] = record.output;
        const calls = [
          { name: 'get_data', arguments: { tool_universe_id: record.uuid } },
          ...turn.sequence.tool_call.slice(1),
        ];
        const texts: string[] = [];
        let failed: string | undefined;
        for (const call of calls) {
          const result = await client.callTool(call);
          f.calls++;
          const text = (result.content as { text: string }[])[0]?.text ?? '';
          if (result.isError || text.startsWith('{"error"')) {
            failed = `${call.name}: ${text}`;
            break;
          }
          texts.push(text);
        }
        f.seconds += (performance.now() - started) / 1000;
        f.records++;
        const problem = failed ?? answerDiffers(texts, turn.answer);
        if (problem === undefined) f.equal++;
        else if (f.problems.length < 5) f.problems.push(`${record.uuid}: ${problem.slice(0, 300)}`);
      }
    } finally {
      await client.close();
    }
  }
  return [...figures.values()];
}

async function startServer(db: string, generated: string, birdDir: string, mapping?: string): Promise<Client> {
  const client = new Client({ name: 'nl2api-vakra-replay', version: '1' });
  const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        cli,
        ...['mcp', '--protocol', 'vakra', '--out', generated, '--source', birdDir],
        ...(mapping ? ['--universes', mapping] : []),
      ],
      env: { ...(process.env as Record<string, string>), MCP_DOMAIN: db },
      stderr: 'inherit',
    }),
  );
  return client;
}

/**
 * Why the answers are not the record's (undefined: they are). An answer of k columns is the
 * last k answers, one column each (nl2api's answer zips its sinks' outputs, the gold lists
 * them last); one column, the last answer.
 */
export function answerDiffers(texts: readonly string[], answer: readonly unknown[][]): string | undefined {
  const width = answer[0]?.length ?? 1;
  const last = texts[texts.length - 1] ?? '';
  const lastWidth = last.startsWith('{') ? (JSON.parse(last) as Partial<Peek>).key_details?.length : undefined;
  if (width === 1 || lastWidth === width) return differs(last, answer);
  for (const [i, text] of texts.slice(-width).entries()) {
    const problem = differs(
      text,
      answer.map((row) => [row[i]]),
      false,
    );
    if (problem) return `column ${i + 1}: ${problem}`;
  }
  return undefined;
}

/** Why an answer's text is not the rows `answer` (undefined: it is); `whole`: a scalar is the whole answer. */
function differs(text: string, answer: readonly unknown[][], whole = true): string | undefined {
  if (text.startsWith('{')) {
    const peek = JSON.parse(text) as Partial<Peek>;
    if (!peek.key_details) return `not a peek: ${text}`;
    if (peek.num_records !== answer.length) return `${peek.num_records} records, the answer has ${answer.length}`;
    const width = answer[0]?.length ?? peek.key_details.length;
    if (peek.key_details.length !== width) return `${peek.key_details.length} keys, the answer has ${width} columns`;
    const rows = (peek.key_details[0]?.first_3_values ?? []).map((_, i) =>
      peek.key_details!.map((k) => k.first_3_values[i]),
    );
    const pool = answer.map((row) => JSON.stringify(row.map(canonical)));
    for (const row of rows) {
      const at = pool.indexOf(JSON.stringify(row.map(canonical)));
      if (at < 0) return `row ${JSON.stringify(row)} is not in the answer`;
      pool.splice(at, 1);
    }
    return undefined;
  }
  if (text.startsWith('[')) {
    const values = (JSON.parse(text) as unknown[]).map((v) => JSON.stringify(canonical(v))).sort();
    const expected = answer.map((row) => JSON.stringify(canonical(row[0]))).sort();
    return JSON.stringify(values) === JSON.stringify(expected)
      ? undefined
      : `list ${text.slice(0, 120)} ≠ ${JSON.stringify(answer).slice(0, 120)}`;
  }
  if (whole && (answer.length !== 1 || answer[0].length !== 1))
    return `scalar ${text}, the answer has ${answer.length} rows`;
  // str() of a text that reads as a number is that number's text: equal either way.
  if (typeof answer[0]?.[0] === 'string' && text === answer[0][0]) return undefined;
  const expected = canonical(answer[0]?.[0]);
  const got = text === 'None' ? null : Number.isNaN(Number(text)) || text.trim() === '' ? text : Number(text);
  return JSON.stringify(canonical(got)) === JSON.stringify(expected)
    ? undefined
    : `scalar ${text} ≠ ${JSON.stringify(answer[0][0])}`;
}

/** VAKRA's answer for a table. */
interface Peek {
  num_records: number;
  key_details: { first_3_values: unknown[] }[];
}

/** A value as compared: a number to 9 significant digits (floats computed two ways). */
function canonical(value: unknown): unknown {
  return typeof value === 'number' ? Number(value.toPrecision(9)) : value;
}

export function vakraReplayLine(f: ReplayFigures): string {
  const share = f.records ? ((100 * f.equal) / f.records).toFixed(1) : '0';
  return (
    `mcp --protocol vakra ${f.formulation.toUpperCase()}: ${f.equal}/${f.records} VAKRA ground-truth records replayed to their answer (${share}%), ` +
    `${f.calls} calls in ${f.seconds.toFixed(1)} s` +
    f.problems.map((p) => `\n  not equal: ${p}`).join('')
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(packageRoot(), 'dist', 'bench', 'vakra-replay.js')) {
  const [split, generated, birdDir, flag] = process.argv.slice(2);
  if (!split || !generated || !birdDir) {
    process.stderr.write(
      'usage: node dist/bench/vakra-replay.js <export>/vakra/<split> <generated output> <BIRD dir>\n',
    );
    process.exit(2);
  }
  for (const f of await vakraReplay(split, generated, birdDir, flag !== '--dataset-only'))
    process.stdout.write(`${vakraReplayLine(f)}\n`);
}
