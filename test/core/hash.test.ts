import { describe, expect, it } from '@jest/globals';
import { canonicalJson } from '../../core/hash.js';

/** The definition canonicalJson promises to match: JSON.stringify of the data with every object's keys sorted. */
function sortedStringify(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, (v as Record<string, unknown>)[k]]),
    );
  });
}

describe('canonicalJson', () => {
  const values: [string, unknown][] = [
    ['a row of plain values', [1, 'a', null, true, 2.5, -0, NaN, Infinity]],
    ['undefined, functions and symbols in an array', [undefined, () => 1, Symbol('s'), 3]],
    ['rows of a result', [[1, 'x'], [2, null], []]],
    ['objects inside an array', [{ b: 1, a: [2, { d: undefined, c: 'z' }] }, 7]],
    ['a bigint inside an array', [1n, 2]],
    ['a buffer (toJSON)', [Buffer.from('hi'), { blob: Buffer.from([0, 255]) }]],
    ['keys in any order', { z: [3, 2, 1], a: { y: null, x: 'é"\\' } }],
    ['a scalar', 'text'],
  ];
  it.each(values)('writes %s as JSON.stringify of the key-sorted data', (_name, value) => {
    expect(canonicalJson(value)).toBe(sortedStringify(value));
  });

  it('writes the text given for an object in its place, also inside an array of rows', () => {
    const upstream = { rows: [[1]] };
    const textOf = (value: object) => (value === upstream ? '{"$ref":"k1"}' : undefined);
    expect(canonicalJson([upstream, [1, 2]], textOf)).toBe('[{"$ref":"k1"},[1,2]]');
  });
});
