import { sortedRows } from '../../runtime/sql/row-sort.js';
import type { SqlValue } from '../../core/model.js';

describe('sortedRows: one order for rows SQL leaves unordered', () => {
  test('NULL, then numbers by value, then text; rows column by column', () => {
    const rows: SqlValue[][] = [
      ['b', 1],
      [10, 'x'],
      [null, 5],
      [9, 'y'],
      ['a', 2],
      [9, 'x'],
      [-1.5, null],
    ];
    expect(sortedRows(rows)).toEqual([
      [null, 5],
      [-1.5, null],
      [9, 'x'],
      [9, 'y'],
      [10, 'x'],
      ['a', 2],
      ['b', 1],
    ]);
  });

  test('any arrangement of the same rows comes out the same, and the input is left as it was', () => {
    const rows: SqlValue[][] = [
      [3, 'c'],
      [1, 'a'],
      [2, null],
      [1, 'a'],
      [null, null],
    ];
    const reversed = [...rows].reverse();
    expect(sortedRows(reversed)).toEqual(sortedRows(rows));
    expect(rows[0]).toEqual([3, 'c']);
  });
});
