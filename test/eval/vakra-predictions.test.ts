import { rmSync } from 'node:fs';
import path from 'node:path';
import { writeVakraPredictions } from '../../bench/vakra-gold.js';
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

function vakraFolder(formulation: string, name: string, keep?: (id: string) => boolean): string {
  const dir = path.join(root, `vakra-predictions-${name}-${formulation}`);
  writeVakraPredictions(path.join(root, 'dataset'), formulation, dir, keep);
  return dir;
}

describe.each(['slot', 'sel', 'rest'] as const)('%s', (formulation) => {
  test('the gold calls as VAKRA predictions complete every item VAKRA can express; ten taken out, ten fewer', async () => {
    const all = await run(root, {
      formulation,
      predictions: { path: vakraFolder(formulation, 'all'), format: 'vakra' },
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
        path: vakraFolder(formulation, 'cut', (id) => !cut.has(id)),
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
