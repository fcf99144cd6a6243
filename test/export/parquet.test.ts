import { parquetReadObjects } from 'hyparquet';
import { recordsToParquet } from '../../export/parquet.js';

/** Sample records written as Parquet and read back with an independent reader (hyparquet): the same records. */

const records = [
  {
    sample_id: '0',
    input: 'List the titles of Mystery books that cost less than 10 dollars.',
    gold_answer: [['Winter Machine']],
    output: [{ name: 'filter_data', arguments: { value: 'Mystery' }, label: 'FILTER_1' }],
    attempts: 1,
    difficulty: 'simple',
    verified: true,
  },
  {
    sample_id: '1',
    input: 'Émile’s books?',
    gold_answer: [],
    output: [],
    attempts: 2.5,
    difficulty: null,
    verified: false,
  },
  { sample_id: '2', input: 'No difficulty field', gold_answer: [[1, null]], output: [], attempts: 3, verified: true },
];

test('every field round-trips: strings, numbers, booleans, nulls and nested values (as JSON text)', async () => {
  const file = recordsToParquet(records);
  const rows = await parquetReadObjects({ file });
  const decoded = rows.map((row) => ({
    ...row,
    gold_answer: JSON.parse(row.gold_answer as string),
    output: JSON.parse(row.output as string),
  }));
  expect(decoded).toEqual(records.map((r) => ({ difficulty: null, ...r })));
});
