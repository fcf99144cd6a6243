import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { vakraRecordCalls } from '../../eval/predictions/vakra.js';
import { generateDemo, run } from './fixtures.js';

/**
 * `--predictions-format vakra`: IBM VAKRA's runner output (one `<domain>.json` per database;
 * calls with no ids or labels, tables passed on by the handles VAKRA's server names them by)
 * replayed through nl2api's tools. The gold calls written as VAKRA's runner would write them
 * complete every item; a record VAKRA's naming was checked on by hand anchors the handles.
 */

let root: string;
beforeAll(async () => {
  root = await generateDemo();
}, 120_000);
afterAll(() => (process.env.KEEP ? console.log('ROOT', root) : rmSync(root, { recursive: true, force: true })));

interface Call {
  name: string;
  arguments: Record<string, unknown>;
  label: string;
}

/** VAKRA's handle prefixes by the tool that made the table (mcp_server.py); undefined: no table. */
function prefixOf(name: string): string | undefined {
  if (/^(aggregate_data|calculate|select_unique_values)/.test(name)) return undefined;
  if (/^(filter_data|select_data_)/.test(name)) return 'filtered';
  if (name.startsWith('sort_data')) return 'sorted';
  if (name === 'retrieve_data') return 'retrieved';
  if (name.startsWith('get_')) return undefined;
  if (name.startsWith('transform_data')) return 'transformed';
  return name === 'group_data_by' ? 'grouped' : 'result';
}

/** nl2api gold calls as VAKRA's runner records them: VAKRA's names where it has the tool, handles for references. */
function asVakra(calls: readonly Call[], db: string): { name: string; arguments: Record<string, unknown> }[] {
  const counters = new Map([['retrieved', 1]]);
  const handles = new Map([['starting_table_var', `retrieved_${db}_1`]]);
  return calls.map((call) => {
    const args: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(call.arguments)) {
      const handle = typeof value === 'string' && /^\$([^.$]+)\$$/.exec(value);
      const renamed =
        name === 'data_source'
          ? 'data_label'
          : name === 'other_data_source'
            ? 'data_label_2'
            : name === 'aggregation_type'
              ? 'aggregation_operation'
              : name;
      args[renamed] = handle && handles.has(handle[1]) ? handles.get(handle[1]) : value;
    }
    const aggregate = /^aggregate_data_(\w+)$/.exec(call.name);
    const getter = /^get_(\w+)$/.exec(call.name);
    const name = aggregate ? `compute_data_${aggregate[1]}` : getter ? `get_${getter[1]}s` : call.name;
    const prefix = prefixOf(call.name);
    if (prefix) {
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      handles.set(call.label, `${prefix}_${db}_${n}`);
    }
    return { name, arguments: args };
  });
}

/**
 * Gold VAKRA's handles can carry: one starting table, and every output a later call uses is a
 * table VAKRA names (its aggregates are scalars, its retrieve a table, not a list for an "in"
 * filter), passed as the data source. Joins, group-bys and subqueries are nl2api's own.
 */
function expressible(calls: readonly Call[]): boolean {
  const tables = new Set(['starting_table_var']);
  return calls.every((call) => {
    const ok = Object.entries(call.arguments).every(([name, value]) => {
      const reference = JSON.stringify(value).match(/\$([^.$"]+)[^$"]*\$/g);
      if (!reference) return true;
      const handle = typeof value === 'string' && /^\$([^.$]+)\$$/.exec(value);
      return /data_source$/.test(name) && handle && tables.has(handle[1]);
    });
    if (prefixOf(call.name)) tables.add(call.label);
    return ok;
  });
}

function vakraFolder(formulation: string, name: string, skip: (id: string) => boolean = () => false): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(path.join(root, 'dataset', formulation)).filter((f) => f.endsWith('.jsonl'))) {
    const db = file.replace(/\.jsonl$/, '');
    const records = readFileSync(path.join(root, 'dataset', formulation, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { sample_id: string; input: string; output: Call[] })
      .filter((r) => !skip(r.sample_id) && (formulation === 'rest' || expressible(r.output)))
      .map((r) => ({
        uuid: r.sample_id,
        domain: db,
        status: 'success',
        error: '',
        duration_s: 1.5,
        output: [{ turn_id: 1, query: r.input, answer: 'done', sequence: { tool_call: asVakra(r.output, db) } }],
      }));
    writeFileSync(path.join(dir, `${db}.json`), JSON.stringify(records, null, 2));
    // The runner's tool list beside each domain's predictions: not predictions.
    writeFileSync(path.join(dir, `${db}_tools.json`), JSON.stringify([{ uuid: 'x', domain: db, all_tools: [] }]));
  }
  return dir;
}

describe.each(['slot', 'sel', 'rest'] as const)('%s', (formulation) => {
  test('the gold calls as VAKRA predictions complete every item VAKRA can express; ten taken out, ten fewer', async () => {
    const all = await run(root, {
      formulation,
      predictions: { path: vakraFolder(formulation, `vakra-predictions-${formulation}`), format: 'vakra' },
      report: `vakra-${formulation}`,
    });
    const [summary] = all.summary.models;
    const written = all.summary.predictions!.read;
    // What VAKRA can express of the demo (REST: all of it), and all of that completes.
    expect(written).toBeGreaterThanOrEqual(formulation === 'rest' ? summary.attempts : summary.attempts / 2);
    expect(Math.round(summary.completion.mean * summary.attempts)).toBe(written);
    expect(summary.completionScored.mean).toBe(written / summary.attempts);
    expect(all.summary.predictions).toMatchObject({ unknown: [], invalid: [], duplicates: [] });
    const completed = all.lines.filter((l) => l.attempt!.scores.completed);
    const cut = new Set(completed.slice(3, 13).map((l) => l.id));
    const fewer = await run(root, {
      formulation,
      predictions: {
        path: vakraFolder(formulation, `vakra-predictions-cut-${formulation}`, (id) => cut.has(id)),
        format: 'vakra',
      },
      report: `vakra-cut-${formulation}`,
    });
    expect(Math.round(fewer.summary.models[0].completion.mean * summary.attempts)).toBe(written - 10);
    expect(fewer.summary.predictions!.missing).toEqual(expect.arrayContaining([...cut]));
    expect(fewer.summary.predictions!.missing).toHaveLength(all.summary.predictions!.missing.length + 10);
  });
});

describe('a record as VAKRA writes it', () => {
  test('handles named by the tool that made the table, counted per prefix; get_data is the starting table', () => {
    const read = vakraRecordCalls({
      uuid: 'u1',
      domain: 'superhero',
      status: 'success',
      error: '',
      duration_s: 9.3,
      output: [
        {
          turn_id: 0,
          query: 'Provide the full names of vampire heroes, heaviest first.',
          answer: '…',
          sequence: {
            tool_call: [
              {
                name: 'filter_data',
                arguments: {
                  data_label: 'retrieved_superhero_1',
                  key_name: 'race_race',
                  value: 'Vampire',
                  condition: 'equal_to',
                },
              },
              {
                name: 'aggregate_data',
                arguments: { data_label: 'filtered_superhero_1', aggregation_operation: 'count' },
              },
              { name: 'sort_data', arguments: { data_label: 'filtered_superhero_1', key_name: 'superhero_weight_kg' } },
              {
                name: 'retrieve_data',
                arguments: { data_label: 'sorted_superhero_1', key_name: 'superhero_full_name', limit: -1 },
              },
              {
                name: 'concatenate_data',
                arguments: { data_label_1: 'retrieved_superhero_2', data_label_2: 'filtered_superhero_1' },
              },
            ],
          },
        },
      ],
    });
    expect(read).toEqual({
      id: 'u1',
      calls: [
        {
          name: 'filter_data',
          label: 'call_0',
          arguments: {
            data_source: '$starting_table_var$',
            key_name: 'race_race',
            value: 'Vampire',
            condition: 'equal_to',
          },
        },
        // No key: VAKRA counts rows.
        {
          name: 'aggregate_data',
          label: 'call_1',
          arguments: { data_source: '$call_0$', aggregation_type: 'count', key_name: '*' },
        },
        // VAKRA sorts descending unless told.
        {
          name: 'sort_data',
          label: 'call_2',
          arguments: { data_source: '$call_0$', key_name: 'superhero_weight_kg', ascending: false },
        },
        {
          name: 'retrieve_data',
          label: 'call_3',
          arguments: { data_source: '$call_2$', key_name: 'superhero_full_name' },
        },
        {
          name: 'combine_data',
          label: 'call_4',
          arguments: { data_source: '$call_3$', other_data_source: '$call_0$', operation: 'union_all' },
        },
      ],
    });
  });

  test('SEL tools, an errored run, and records that are not VAKRA records', () => {
    const turn = (tool_call: unknown) => ({
      uuid: 'u2',
      output: [{ turn_id: 1, query: 'q', answer: '', sequence: { tool_call } }],
    });
    expect(
      vakraRecordCalls(
        turn([
          {
            name: 'select_data_equal_to',
            arguments: { data_label: 'retrieved_data_1', key_name: 'BrandID', value: 3, condition: 'equal_to' },
          },
          {
            name: 'sort_data_ascending',
            arguments: { data_label: 'filtered_data_1', key_name: 'Price', ascending: true },
          },
          {
            name: 'compute_data_max',
            arguments: { data_label: 'sorted_data_1', key_name: 'Price', aggregation_operation: 'max', limit: -1 },
          },
          { name: 'get_Names', arguments: { data_label: 'sorted_data_1' } },
          {
            name: 'transform_data_to_datetime_part',
            arguments: { data_label: 'sorted_data_1', key_name: 'Date', datetime_pattern: '%Y' },
          },
          { name: 'Calculator', arguments: { input_1: 3, input_2: 4, operation: 'add' } },
        ]),
      ),
    ).toEqual({
      id: 'u2',
      calls: [
        {
          name: 'select_data_equal_to',
          label: 'call_0',
          arguments: { data_source: '$starting_table_var$', key_name: 'BrandID', value: 3 },
        },
        { name: 'sort_data_ascending', label: 'call_1', arguments: { data_source: '$call_0$', key_name: 'Price' } },
        { name: 'aggregate_data_max', label: 'call_2', arguments: { data_source: '$call_1$', key_name: 'Price' } },
        { name: 'get_Name', label: 'call_3', arguments: { data_source: '$call_1$' } },
        {
          name: 'transform_data_datetime',
          label: 'call_4',
          arguments: { data_source: '$call_1$', key_name: 'Date', operation_args: { pattern: '%Y' } },
        },
        { name: 'calculate_add', label: 'call_5', arguments: { value: 3, operation_args: { operand: { value: 4 } } } },
      ],
    });
    // A timed-out run: no calls that count.
    expect(
      vakraRecordCalls({ uuid: 'u3', status: 'error', error: 'Agent timed out after 300.0 seconds', output: [] }),
    ).toEqual({ id: 'u3', calls: [] });
    expect(vakraRecordCalls({ output: [] })).toEqual({ error: 'no "uuid"' });
    expect(vakraRecordCalls(turn([{ name: 'filter_data', arguments: '{}' }]))).toEqual({
      error: '"u2": a tool call is not {name, arguments: {...}}',
    });
  });
});
