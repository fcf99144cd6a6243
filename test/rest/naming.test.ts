import { expect, test } from '@jest/globals';
import { columnLabel } from '../../generators/rest/naming.js';

/** A column's label is read inside sentences (`Value of <label> to match`): a noun phrase, one line. */

test("a description's first line only, without its preamble, period or a capital at a plain word", () => {
  expect(columnLabel('StatusType', 'This field identifies the status of the district.')).toBe(
    'the status of the district',
  );
  expect(columnLabel('hero_id', 'the id of the hero\nMaps to superhero(id)')).toBe('the id of the hero');
  expect(columnLabel('spent', 'The total amount spent')).toBe('the total amount spent');
  expect(columnLabel('cds', 'CDS code')).toBe('CDS code');
  expect(columnLabel('A11', 'Average salary')).toBe('average salary');
  expect(columnLabel('A2', 'district_name')).toBe('district name');
});

test("the column's words when the description is long or empty", () => {
  expect(columnLabel('free_meal_rate', '')).toBe('free meal rate');
  expect(columnLabel('free_meal_rate', 'x'.repeat(61))).toBe('free meal rate');
});
