import { canonicalJson } from '../../core/hash.js';

/** JSON.stringify of the data with every object's keys sorted: what canonical JSON is defined as. */
function sortedStringify(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}

describe('canonicalJson', () => {
  test('JSON.stringify of the key-sorted data, whatever the arrays hold', () => {
    const values: unknown[] = [
      { b: 1, a: [3, 'x', null, true, -0, NaN, 1.5e300], c: { z: undefined, y: 'é"\\\u2028' } },
      [[1, 2], [3, 'four'], [null]],
      [1, { b: 2, a: 1 }, 'x'],
      [undefined, 1, () => 1],
      { rows: Array.from({ length: 50 }, (_, i) => [i, `v${i}`, i % 3 === 0 ? null : i / 7]) },
      [],
      'text',
      7,
    ];
    for (const value of values) expect(canonicalJson(value)).toBe(sortedStringify(value));
  });

  test('an object whose text is given is written as that text', () => {
    const tools = [{ name: 't' }];
    expect(canonicalJson({ b: tools, a: 1 }, (v) => (v === tools ? '"kept"' : undefined))).toBe('{"a":1,"b":"kept"}');
  });
});
