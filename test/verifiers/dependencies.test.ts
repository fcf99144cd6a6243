import { checkDependencies, type KeyCount } from '../../verifiers/dependencies.js';

/** The dependencies verdict over a sequence's data keys counted on each state of the database. */

const count = (rows: number, distinct: number): KeyCount => ({ table: 'team', columns: ['code'], rows, distinct });

test('a key unique and non-NULL everywhere: accepted, with where it held', () => {
  expect(
    checkDependencies([
      { variant: 'original', counts: [count(4, 4)] },
      { variant: 'perturbed-1', counts: [count(4, 4)] },
    ]),
  ).toEqual({
    ok: true,
    category: 'data_keys',
    message: 'team.code unique and never NULL on original, perturbed-1',
    keys: [{ table: 'team', columns: ['code'], holdsOn: ['original', 'perturbed-1'] }],
  });
});

test('a repeated value or a NULL on one state rejects as dependencies:<state>', () => {
  const verdict = checkDependencies([
    { variant: 'original', counts: [count(4, 4)] },
    { variant: 'perturbed-1', counts: [count(4, 3)] },
  ]);
  expect(verdict).toEqual({
    ok: false,
    category: 'dependencies:perturbed-1',
    message: 'team.code is no key on perturbed-1: 4 rows, 3 distinct non-NULL values',
  });
});
